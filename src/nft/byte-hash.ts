// Bytes as one number: two murmur3 lanes (different seeds) folded into an exact double below 2^53.
// Not cryptographic: it tells apart what changed by accident (a constant, an element), which is
// all its callers ask. A set's elements (element-hash.ts) and a rule's expressions (rule-digest.ts)
// are compared by it; a chance match of two different inputs is 1 in 2^53.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** One 32-bit word into a murmur3 state. */
function mix(h: number, k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** murmur3's finalizer: every input bit reaches every output bit. */
function finish(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The hash of `bytes[from, to)`. */
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let a = 0x9747b28c;
  let b = 0x5bd1e995;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    const k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    a = mix(a, k);
    b = mix(b, k);
  }
  if (i < to) {
    let k = 0;
    for (let s = 0; i < to; i++, s += 8) k |= bytes[i]! << s;
    a = mix(a, k);
    b = mix(b, k);
  }
  const n = to - from;
  return finish(a, n) * 0x200000 + (finish(b, n) >>> 11);
}
