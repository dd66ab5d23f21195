// A JSON List (`{"kind": "List", "items": [...]}`, as `kubectl get -o json` writes it) read one
// item at a time: the file's bytes (all in memory, or a small window over the file when it is read
// again: file-window.ts) are scanned for where each item starts and ends, and each item is decoded
// and parsed only when it is reached. The caller can then hand an item on and drop it before the
// next is parsed, so that a 10 MB list never exists as one tree of objects (at 10k services that
// tree was most of the proxy's peak memory), nor as one string (the text of the whole file would be
// an object of its own in V8's large-object space, which only a full collection frees). The scan
// works on UTF-8 bytes: every byte it looks for is ASCII, and no byte of a multi-byte character is.
// Any text the scanner does not recognise as exactly that shape is left to JSON.parse of the whole,
// which also gives the right error message for broken JSON.
//
// Where the items are is one typed array, not a pair of numbers per item: a file rewritten a few
// times a second is scanned as often, and 20k small arrays per scan were garbage for the old
// generation. So are the items' hashes, when the reader asks for them (ListMemo,
// manifest-objects.ts): each item is hashed while the scan has its bytes in the window.

import type { FileWindow } from './file-window.js';
import type { ItemHasher } from './item-hash.js';

/** The List without its items (`items: null`), and where each item's bytes are. */
export interface JsonListSpans {
  head: string;
  /** Item i's bytes are [items[2i], items[2i + 1]) in the file (files are at most 64 MiB: offsets fit). */
  items: Uint32Array;
  /** Item i's bytes hashed, when the scan was given a hasher. */
  hashes: BigUint64Array | undefined;
  /**
   * How deep brackets nest in the deepest item, its own counted (0 when no item has any): while
   * this is under the reader's limit, no parsed item needs its nesting checked again.
   */
  deepest: number;
}

/**
 * Start and end offsets, two by two, and a hash per item, in typed arrays that grow as the scan
 * finds items. Sized for the items the List had at its read before, when the reader knows: a List
 * rewritten a few times a second keeps its length, and is then scanned into arrays of exactly its
 * size, allocated once per read and never copied.
 */
class ItemList {
  private spans: Uint32Array;
  private hashes: BigUint64Array | undefined;
  private count = 0;

  constructor(hashed: boolean, expected: number) {
    this.spans = new Uint32Array(2 * expected);
    if (hashed) this.hashes = new BigUint64Array(expected);
  }

  push(start: number, end: number, hash?: bigint): void {
    if (2 * this.count + 2 > this.spans.length) {
      const grown = new Uint32Array(this.spans.length * 2);
      grown.set(this.spans);
      this.spans = grown;
      if (this.hashes) {
        const hashes = new BigUint64Array(this.hashes.length * 2);
        hashes.set(this.hashes);
        this.hashes = hashes;
      }
    }
    this.spans[2 * this.count] = start;
    this.spans[2 * this.count + 1] = end;
    if (this.hashes) this.hashes[this.count] = hash!;
    this.count++;
  }

  /** The spans and hashes, exactly as many as found (the reader keeps the hashes). */
  done(): { items: Uint32Array; hashes: BigUint64Array | undefined } {
    const exact = 2 * this.count === this.spans.length;
    return { items: exact ? this.spans : this.spans.slice(0, 2 * this.count), hashes: exact ? this.hashes : this.hashes?.slice(0, this.count) };
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The offset of the first byte at or after `i` that is not whitespace (the file's size if none). */
function skipWhitespace(w: FileWindow, i: number): number {
  while (i < w.size && isWhitespace(w.byte(i))) i++;
  return i;
}

/** The index after the string that opens at `i`, or -1 when it does not close before `limit`. */
function stringEnd(text: Uint8Array, i: number, limit: number): number {
  for (let j = i + 1; j < limit; j++) {
    const c = text[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** What a scan learns besides where values end. */
interface ScanStats {
  deepest: number;
}

/**
 * The index after the value that starts at `i` (strings and brackets skipped whole), or -1 when it
 * is not whole before `limit`. A scalar ends at the first delimiter: `limit` when there is none.
 */
function valueEnd(text: Uint8Array, i: number, limit: number, stats?: ScanStats): number {
  const first = text[i];
  if (first === QUOTE) return stringEnd(text, i, limit);
  if (first !== 0x7b && first !== 0x5b) {
    let j = i;
    for (; j < limit; j++) {
      const c = text[j]!;
      if (c === 0x2c || c === 0x7d || c === 0x5d || isWhitespace(c)) break;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  for (let j = i; j < limit; j++) {
    const c = text[j];
    if (c === QUOTE) {
      j = stringEnd(text, j, limit) - 1;
      if (j < 0) return -1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (stats && depth > stats.deepest) stats.deepest = depth;
    } else if ((c === 0x7d || c === 0x5d) && --depth === 0) return j + 1;
  }
  return -1;
}

/**
 * The offset after the value that starts at `i` in the file, or -1 when the file holds no whole
 * value there: the window grows until the value fits in it. A scalar the window's end cuts is read
 * on too, as the file may go on with more of it.
 */
function valueEndIn(w: FileWindow, i: number, stats?: ScanStats): number {
  let length = 1;
  for (;;) {
    const { bytes, start, end } = w.at(i, length);
    const found = valueEnd(bytes, i - start, end - start, stats);
    if (found >= 0 && (start + found < end || end === w.size)) return start + found;
    if (end === w.size) return -1;
    length = 2 * (end - i);
  }
}

/**
 * The items of a top-level object's "items" array, or undefined when the file is not that shape;
 * each hashed with `hash` if given. `expectedItems`: how many items the List had at its read before.
 */
export function scanJsonList(w: FileWindow, hash?: ItemHasher, expectedItems = 1024): JsonListSpans | undefined {
  let i = skipWhitespace(w, 0);
  if (i === w.size || w.byte(i) !== 0x7b) return undefined;
  i = skipWhitespace(w, i + 1);
  let itemsAt: [number, number] | undefined;
  const items = new ItemList(hash !== undefined, Math.max(1, expectedItems));
  const stats: ScanStats = { deepest: 0 };
  while (i < w.size && w.byte(i) !== 0x7d) {
    if (w.byte(i) !== QUOTE) return undefined;
    const keyEnd = valueEndIn(w, i);
    if (keyEnd < 0) return undefined;
    const key = utf8(w.bytes(i + 1, keyEnd - 1));
    i = skipWhitespace(w, keyEnd);
    if (i === w.size || w.byte(i) !== 0x3a) return undefined;
    i = skipWhitespace(w, i + 1);
    if (i === w.size) return undefined;
    // A second "items" would win in JSON.parse: leave such a text to it.
    if (key === 'items' && itemsAt) return undefined;
    if (key === 'items' && w.byte(i) === 0x5b) {
      const start = i;
      i = skipWhitespace(w, i + 1);
      while (i < w.size && w.byte(i) !== 0x5d) {
        const end = valueEndIn(w, i, stats);
        if (end < 0) return undefined;
        items.push(i, end, hash?.(w.bytes(i, end)));
        i = skipWhitespace(w, end);
        if (i === w.size) return undefined;
        if (w.byte(i) === 0x2c) i = skipWhitespace(w, i + 1);
        else if (w.byte(i) !== 0x5d) return undefined;
      }
      if (i === w.size) return undefined;
      itemsAt = [start, i + 1];
      i++;
    } else {
      const end = valueEndIn(w, i);
      if (end < 0) return undefined;
      i = end;
    }
    i = skipWhitespace(w, i);
    if (i === w.size) return undefined;
    if (w.byte(i) === 0x2c) i = skipWhitespace(w, i + 1);
    else if (w.byte(i) !== 0x7d) return undefined;
  }
  if (i === w.size || !itemsAt || skipWhitespace(w, i + 1) !== w.size) return undefined;
  // The List's own keys, read back (they come before and after the items, and are small).
  const head = utf8(w.bytes(0, itemsAt[0])) + 'null' + utf8(w.bytes(itemsAt[1], w.size));
  return { head, ...items.done(), deepest: stats.deepest };
}

// A byte order mark is text like any other here: it is kept where it stands (a key that starts
// with one is not "items"; a file that starts with one is left to JSON.parse, which refuses it).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The text of UTF-8 bytes. */
export function utf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
