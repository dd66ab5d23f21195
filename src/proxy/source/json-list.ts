// A JSON List (`{"kind": "List", "items": [...]}`, as `kubectl get -o json` writes it) read one
// item at a time: the file's bytes are scanned for where each item starts and ends, and each is
// decoded and parsed only when it is reached. The caller can then hand an item on and drop it before
// the next is parsed, so that a 10 MB list never exists as one tree of objects (at 10k services that
// tree was most of the proxy's peak memory), nor as one string: the text of the whole file would be
// an object of its own in V8's large-object space, which only a full collection frees (a file
// rewritten a few times a second left hundreds of MB of them behind). The scan works on UTF-8 bytes:
// every byte it looks for is ASCII, and no byte of a multi-byte character is. Any text the scanner
// does not recognise as exactly that shape is left to JSON.parse of the whole, which also gives the
// right error message for broken JSON.
//
// Where the items are is one typed array, not a pair of numbers per item: a file rewritten a few
// times a second is scanned as often, and 20k small arrays per scan were garbage for the old
// generation (the reader keeps the spans of a List's last read to compare the next one with).

/** The List without its items (`items: null`), and where each item's bytes are. */
export interface JsonListSpans {
  head: string;
  /** Item i's bytes are [items[2i], items[2i + 1]) (files are at most 64 MiB: offsets fit). */
  items: Uint32Array;
  /**
   * How deep brackets nest in the deepest item, its own counted (0 when no item has any): while
   * this is under the reader's limit, no parsed item needs its nesting checked again.
   */
  deepest: number;
}

/** Start and end offsets, two by two, in a typed array that grows as the scan finds items. */
class SpanList {
  private spans = new Uint32Array(2048);
  private length = 0;

  push(start: number, end: number): void {
    if (this.length + 2 > this.spans.length) {
      const grown = new Uint32Array(this.spans.length * 2);
      grown.set(this.spans);
      this.spans = grown;
    }
    this.spans[this.length++] = start;
    this.spans[this.length++] = end;
  }

  /** The spans, exactly as many as found (a copy: the reader may keep them). */
  done(): Uint32Array {
    return this.spans.slice(0, this.length);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function skipWhitespace(text: Uint8Array, i: number): number {
  for (;;) {
    const c = text[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** The index after the string that opens at `i`, or -1. */
function stringEnd(text: Uint8Array, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
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

/** The index after the value that starts at `i` (strings and brackets skipped whole), or -1. */
function valueEnd(text: Uint8Array, i: number, stats?: ScanStats): number {
  const first = text[i];
  if (first === QUOTE) return stringEnd(text, i);
  if (first !== 0x7b && first !== 0x5b) {
    let j = i;
    for (; j < text.length; j++) {
      const c = text[j];
      if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === QUOTE) {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (stats && depth > stats.deepest) stats.deepest = depth;
    } else if ((c === 0x7d || c === 0x5d) && --depth === 0) return j + 1;
  }
  return -1;
}

/** The items of a top-level object's "items" array, or undefined when the text is not that shape. */
export function jsonListSpans(text: Uint8Array): JsonListSpans | undefined {
  let i = skipWhitespace(text, 0);
  if (text[i] !== 0x7b) return undefined;
  i = skipWhitespace(text, i + 1);
  let itemsAt: [number, number] | undefined;
  const items = new SpanList();
  const stats: ScanStats = { deepest: 0 };
  while (text[i] !== 0x7d) {
    if (text[i] !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const key = utf8(text, i + 1, keyEnd - 1);
    i = skipWhitespace(text, keyEnd);
    if (text[i] !== 0x3a) return undefined;
    i = skipWhitespace(text, i + 1);
    // A second "items" would win in JSON.parse: leave such a text to it.
    if (key === 'items' && itemsAt) return undefined;
    if (key === 'items' && text[i] === 0x5b) {
      const start = i;
      i = skipWhitespace(text, i + 1);
      while (text[i] !== 0x5d) {
        const end = valueEnd(text, i, stats);
        if (end < 0) return undefined;
        items.push(i, end);
        i = skipWhitespace(text, end);
        if (text[i] === 0x2c) i = skipWhitespace(text, i + 1);
        else if (text[i] !== 0x5d) return undefined;
      }
      itemsAt = [start, i + 1];
      i++;
    } else {
      const end = valueEnd(text, i);
      if (end < 0) return undefined;
      i = end;
    }
    i = skipWhitespace(text, i);
    if (text[i] === 0x2c) i = skipWhitespace(text, i + 1);
    else if (text[i] !== 0x7d) return undefined;
  }
  if (!itemsAt || skipWhitespace(text, i + 1) !== text.length) return undefined;
  return { head: utf8(text, 0, itemsAt[0]) + 'null' + utf8(text, itemsAt[1], text.length), items: items.done(), deepest: stats.deepest };
}

// A byte order mark is text like any other here: it is kept where it stands (a key that starts
// with one is not "items"; a file that starts with one is left to JSON.parse, which refuses it).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The text of UTF-8 bytes [start, end). */
export function utf8(bytes: Uint8Array, start: number, end: number): string {
  return decoder.decode(bytes.subarray(start, end));
}
