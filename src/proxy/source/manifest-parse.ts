// The text of one manifest file -> its documents, within bounds, so that no file can take the
// proxy down or stall it: JSON through JSON.parse (the YAML parser is many times slower on a large
// JSON List, and JSON is what generators write), YAML (multi-document) through the yaml package
// with its alias expansion capped (an alias bomb names its file instead of filling memory), and
// for both a nesting depth limit (a 100,000-deep nesting would overflow the stack of whatever walks
// it recursively later: the YAML composer, JSON.stringify). A file fails as a whole: the caller then
// keeps what the file gave before, because a file that does not parse is most often one being
// written.

import { FileChangedError, type FileWindow } from './file-window.js';
import { utf8, type JsonListSpans } from './json-list.js';
import { yaml } from '../../on-demand.js';

/** Larger files are refused unread: a manifest of 100,000 objects is well under it. */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;
/** Deeper nesting is refused: Kubernetes objects nest about 15 levels (managedFields included). */
export const MAX_NESTING_DEPTH = 100;
/** Alias expansions per YAML document (the yaml package's own default, stated here as a bound we rely on). */
export const MAX_YAML_ALIASES = 100;

export interface ManifestDocument {
  /** "file" for JSON, "file (document n)" for YAML. */
  origin: string;
  value: unknown;
}

export type ParsedManifest = { documents: ManifestDocument[] } | { failed: string };

/**
 * Thrown while a JSON List's items are read one by one (a document's `items` is then an iterable
 * of JsonListItem, each parsed when asked): the file fails as a whole, as if JSON.parse of the
 * whole had failed.
 */
export class ManifestParseError extends Error {}

/**
 * What a manifest file holds: its UTF-8 bytes (YAML, or JSON of any shape), or a JSON List as its
 * scan found it (json-list.ts), with the window its items are read through.
 */
export type ManifestContent = { bytes: Buffer; json: boolean } | { list: JsonListSpans; window: FileWindow };

/** A manifest file's content -> its documents. */
export function parseManifest(file: string, content: ManifestContent): ParsedManifest {
  if ('list' in content) return parseJsonList(file, content.window, content.list);
  return content.json ? parseJson(file, content.bytes) : parseYaml(file, utf8(content.bytes));
}

function parseJson(file: string, bytes: Buffer): ParsedManifest {
  let value: unknown;
  try {
    value = JSON.parse(utf8(bytes));
  } catch (err) {
    return { failed: `not valid JSON: ${(err as Error).message}` };
  }
  if (nestedTooDeep(value)) return { failed: `not read: nested deeper than ${MAX_NESTING_DEPTH} levels` };
  return { documents: [{ origin: file, value }] };
}

/** A JSON List's items: where they are in the file, the window to read them through, their hashes. */
interface JsonListItems {
  window: FileWindow;
  spans: Uint32Array;
  hashes: BigUint64Array | undefined;
  /** No item nests deeper than the limit allows (the scan counted): parsed items need no check. */
  shallow: boolean;
}

/**
 * An item of a JSON List read item by item (the iterable of a List's `items` yields these): parsed
 * when asked, so that a reader that has seen the same bytes before can skip it (hash).
 */
export class JsonListItem {
  private readonly start: number;
  private readonly end: number;

  constructor(
    private readonly list: JsonListItems,
    readonly index: number,
  ) {
    this.start = list.spans[2 * index]!;
    this.end = list.spans[2 * index + 1]!;
  }

  /** How many items its List has. */
  get listLength(): number {
    return this.list.spans.length / 2;
  }

  /** Its List's item hashes (the scan's, when it was asked for them: ListMemo). */
  get listHashes(): BigUint64Array {
    if (!this.list.hashes) throw new Error('the List was scanned without item hashes');
    return this.list.hashes;
  }

  /** Throws ManifestParseError: the file then fails as a whole. */
  value(): unknown {
    let item: unknown;
    try {
      item = JSON.parse(utf8(this.list.window.bytes(this.start, this.end)));
    } catch (err) {
      const reason = err instanceof FileChangedError ? err.message : `not valid JSON: ${(err as Error).message}`;
      throw new ManifestParseError(`${reason} (in the item at offset ${this.start})`);
    }
    // The List and its items array are two levels above the item.
    if (!this.list.shallow && nestedTooDeep(item, 2)) throw new ManifestParseError(`not read: nested deeper than ${MAX_NESTING_DEPTH} levels`);
    return item;
  }
}

/** A JSON List whose items are parsed when iterated (json-list.ts says why). */
function parseJsonList(file: string, window: FileWindow, { head: headText, items: spans, hashes, deepest }: JsonListSpans): ParsedManifest {
  let head: unknown;
  try {
    head = JSON.parse(headText);
  } catch (err) {
    return { failed: `not valid JSON: ${(err as Error).message}` };
  }
  if (nestedTooDeep(head)) return { failed: `not read: nested deeper than ${MAX_NESTING_DEPTH} levels` };
  // An item's outermost bracket sits two levels down (in the List, in its items array).
  const list: JsonListItems = { window, spans, hashes, shallow: deepest + 1 < MAX_NESTING_DEPTH };
  const items: Iterable<JsonListItem> = {
    *[Symbol.iterator]() {
      for (let i = 0; 2 * i < spans.length; i++) yield new JsonListItem(list, i);
    },
  };
  return { documents: [{ origin: file, value: { ...(head as object), items } }] };
}

function parseYaml(file: string, text: string): ParsedManifest {
  // Checked on the text: the composer recurses per level, and takes seconds on a deep flow nesting
  // before it reports anything.
  if (bracketDepth(text) > MAX_NESTING_DEPTH) return { failed: `not read: nested deeper than ${MAX_NESTING_DEPTH} levels` };
  const documents: ManifestDocument[] = [];
  try {
    const docs = yaml().parseAllDocuments(text);
    for (const [i, doc] of docs.entries()) {
      const where = docs.length > 1 ? `document ${i + 1}: ` : '';
      const error = doc.errors[0];
      // The message's first line has the reason and position; the rest is a code excerpt.
      if (error) return { failed: `${where}not valid YAML: ${error.message.split('\n')[0]}` };
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
      } catch (err) {
        return { failed: `${where}not valid YAML: ${(err as Error).message}` };
      }
      if (nestedTooDeep(value)) return { failed: `${where}not read: nested deeper than ${MAX_NESTING_DEPTH} levels` };
      documents.push({ origin: `${file} (document ${i + 1})`, value });
    }
  } catch (err) {
    // The parser's own limits (a RangeError from a nesting deep in block style): still this file's problem only.
    return { failed: `not valid YAML: ${(err as Error).message}` };
  }
  return { documents };
}

/**
 * Whether objects and arrays nest deeper than the limit. Recursive, but never deeper than the limit
 * itself, so safe at any depth of input; allocation-free, as it runs over every object read.
 */
function nestedTooDeep(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= MAX_NESTING_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (nestedTooDeep(child, depth + 1)) return true;
  } else {
    for (const key in value) if (nestedTooDeep((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** What may come right before a quoted scalar ("it's" in plain text opens none). */
const SCALAR_START = new Set([0x20, 0x09, 0x0a, 0x0d, 0x5b, 0x7b, 0x2c, 0x3a, 0x2d, 0x3f]);

/**
 * The deepest nesting of flow collections ([ and {) outside quoted scalars: an upper bound of the
 * YAML's flow nesting (a bracket inside a plain scalar counts too, harmlessly: it only makes the
 * bound more cautious).
 */
function bracketDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote = 0; // the code of the open quote, or 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote !== 0) {
      if (c === 0x5c && quote === 0x22) i++; // a backslash escape in a double-quoted scalar
      else if (c === quote) quote = 0;
    } else if ((c === 0x22 || c === 0x27) && (i === 0 || SCALAR_START.has(text.charCodeAt(i - 1)))) quote = c;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return max;
}
