// One set element as one number: a 53-bit hash of the bytes the kernel holds for it, written here
// piece by piece. Two writers feed it the same bytes for the same element: the one for element
// objects (reconcile/element-hashes.ts: values encoded as the encoder writes them) and the one for
// a dump's undecoded elements (netlink/decode/elements.ts: the attributes' bytes as read). The
// addon makes the same numbers for a dump on its own thread (native/element-hash.h; a change here
// is a change there, and test/nft/native-element-hashes.kernel.test.ts fails until both agree). The
// pieces, in this order: the key's bytes, then the data's bytes or the verdict's kind and chain,
// then the comment, then the timeout; text is set apart by a length prefix, so no piece can run
// into the next.

import { hashBytes } from './byte-hash.js';
import type { NftSet } from './objects.js';
import type { Datatype, Scalar } from './types/datatypes.js';
import { writeValues } from './values.js';

/** Whether the hashes cover a set's elements: not those of interval and anonymous sets. */
export function hashableSet(set: Pick<NftSet, 'anonymous' | 'flags'>): boolean {
  return !set.anonymous && !set.flags?.includes('interval');
}

let scratch = new Uint8Array(256);
let at = 0;

function room(n: number): void {
  if (at + n <= scratch.length) return;
  const next = new Uint8Array(Math.max(at + n, scratch.length * 2));
  next.set(scratch.subarray(0, at));
  scratch = next;
}

/** Starts the next element's bytes. */
export function startElement(): void {
  at = 0;
}

/** Appends values as the encoder writes them (throws as writeValues does). */
export function putValues(types: readonly Datatype[], values: readonly Scalar[], length: number): void {
  room(length);
  writeValues(types, values, scratch, at);
  at += length;
}

/**
 * Appends bytes as read (a dump's key or data attribute). Copied one by one: they are a few bytes,
 * and a view to set() from was an allocation per element of a restart's dump.
 */
export function putBytes(src: Uint8Array, from: number, length: number): void {
  room(length);
  for (let i = 0; i < length; i++) scratch[at + i] = src[from + i]!;
  at += length;
}

/** Appends a piece of text (a verdict's kind or chain, a comment, a timeout), length first. */
export function putText(text: string): void {
  room(4 + text.length * 2);
  scratch[at++] = 0xff;
  scratch[at++] = text.length & 0xff;
  scratch[at++] = (text.length >>> 8) & 0xff;
  scratch[at++] = 0xfe;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    scratch[at++] = c & 0xff;
    scratch[at++] = c >>> 8;
  }
}

/** The element's hash (byte-hash.ts). */
export function elementHash(): number {
  return hashBytes(scratch, 0, at);
}

/** The first `n` hashes sorted, each once: the elements as a set (a key given twice is one element). */
export function sortedDistinct(hashes: Float64Array, n: number): Float64Array {
  const out = hashes.subarray(0, n).sort();
  let distinct = 0;
  for (let i = 0; i < n; i++) if (i === 0 || out[i] !== out[distinct - 1]) out[distinct++] = out[i]!;
  return out.subarray(0, distinct);
}

/** Whether two sortedDistinct() answers are the same elements. */
export function sameElementHashes(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
