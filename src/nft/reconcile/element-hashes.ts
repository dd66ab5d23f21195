// Whether the elements contributed to a set are the ones a dump read, told without keying either
// side. A restart asks it of every shared set: keying both sides (a Map of each, then a compare)
// costs what writing the elements does. Here an element becomes one number, a 53-bit hash of the
// bytes the kernel holds for it (its key and data as the encoder writes them, so that equal values
// spelled differently hash the same) and of its comment and timeout. Sorted and de-duplicated (a
// key two contributors both give is one kernel element), two lists hold the same elements when
// their numbers are equal.
//
// Equal numbers for different contents would make a caller skip a needed write: two different
// elements must hash alike (odds about 2^-53 per pair that differs), or two elements of the same
// side must collide and the kernel lack one of them (about n^2 / 2^54 for the collision, at 120k
// elements under 1e-6, times the odds that the missing element is that one). A caller that must
// be exact keys the elements instead (ElementStore).

import type { NftSet, SetElement } from '../objects.js';
import { isVerdict } from '../types/verdict.js';
import { valuesLength, writeValues } from '../values.js';

let scratch = new Uint8Array(256);

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

/** Appends a string's UTF-16 units to the scratch bytes (a comment, a chain name), after a separator. */
function appendText(at: number, text: string): number {
  const need = at + 4 + text.length * 2;
  if (need > scratch.length) grow(need);
  scratch[at++] = 0xff;
  scratch[at++] = text.length & 0xff;
  scratch[at++] = (text.length >>> 8) & 0xff;
  scratch[at++] = 0xfe;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    scratch[at++] = c & 0xff;
    scratch[at++] = c >>> 8;
  }
  return at;
}

function grow(need: number): void {
  const next = new Uint8Array(Math.max(need, scratch.length * 2));
  next.set(scratch);
  scratch = next;
}

/** The element's bytes in scratch: key, data (or verdict), comment, timeout. Returns their length. */
function elementBytes(set: NftSet, keyLength: number, dataLength: number, e: SetElement): number {
  if (keyLength + dataLength + 16 > scratch.length) grow(keyLength + dataLength + 16);
  writeValues(set.key, e.key, scratch, 0);
  let at = keyLength;
  const v = e.value;
  if (v !== undefined) {
    if (isVerdict(v)) at = appendText(appendText(at, v.kind), 'chain' in v ? v.chain : '');
    else if (Array.isArray(set.data)) {
      writeValues(set.data, v, scratch, at);
      at += dataLength;
    } else throw new RangeError('data for a set without data types');
  }
  if (e.comment !== undefined) at = appendText(at, e.comment);
  if (e.timeout !== undefined) at = appendText(at, String(e.timeout));
  return at;
}

/** The element's 53-bit hash: two murmur3 lanes of its bytes (different seeds), as one exact double. */
function hashElement(length: number): number {
  let a = 0x9747b28c;
  let b = 0x5bd1e995;
  let i = 0;
  for (; i + 4 <= length; i += 4) {
    const k = scratch[i]! | (scratch[i + 1]! << 8) | (scratch[i + 2]! << 16) | (scratch[i + 3]! << 24);
    a = mix(a, k);
    b = mix(b, k);
  }
  if (i < length) {
    let k = 0;
    for (let s = 0; i < length; i++, s += 8) k |= scratch[i]! << s;
    a = mix(a, k);
    b = mix(b, k);
  }
  return finish(a, length) * 0x200000 + (finish(b, length) >>> 11);
}

/**
 * The elements' hashes, sorted and de-duplicated. Undefined when the set or an element is not one
 * this covers (an interval or anonymous set, an element with a range end, values its types refuse:
 * the caller keys the elements instead, and reports those there).
 */
export function elementHashes(set: NftSet, lists: readonly (readonly SetElement[])[]): Float64Array | undefined {
  if (set.anonymous || set.flags?.includes('interval')) return undefined;
  let total = 0;
  for (const list of lists) total += list.length;
  const out = new Float64Array(total);
  const keyLength = valuesLength(set.key);
  const dataLength = Array.isArray(set.data) ? valuesLength(set.data) : 0;
  let n = 0;
  try {
    for (const list of lists) {
      for (const e of list) {
        if (e.keyEnd !== undefined) return undefined;
        out[n++] = hashElement(elementBytes(set, keyLength, dataLength, e));
      }
    }
  } catch {
    return undefined;
  }
  out.sort();
  let distinct = 0;
  for (let i = 0; i < n; i++) if (i === 0 || out[i] !== out[distinct - 1]) out[distinct++] = out[i]!;
  return out.subarray(0, distinct);
}

/** Whether two elementHashes() answers are the same elements. */
export function sameElementHashes(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
