// From a parsed manifest document to the objects the manifest source sends (manifests.ts reads the
// files and diffs reads): a List's items one by one (a JSON List's from what the same bytes gave at
// the read before, told by their hash: ListMemo), each object's kind, apiVersion, name and
// namespace settled, then validated as the informers' objects are (k8s/validation). What cannot be
// used becomes a problem that names the object, its file and the reason, and costs nothing else.

import type { EndpointSlice, Node, Service } from '../../k8s/objects.js';
import { printable } from '../../k8s/validation/printable.js';
import { validateObject } from '../../k8s/validation/validate.js';
import { flat } from '../flat-string.js';
import { JsonListItem } from './manifest-parse.js';
import type { SourceProblem } from './source.js';

export type ManifestKind = 'Service' | 'EndpointSlice' | 'Node';

export interface ManifestObject {
  kind: ManifestKind;
  /** "Kind/namespace/name" (namespace empty for Nodes). */
  key: string;
  /**
   * The object as read, until the read that found it has emitted it; then only its kind and
   * metadata's name and namespace, enough to delete it (manifests.ts, forgetBodies).
   */
  object: Service | EndpointSlice | Node;
  /** Where it was read: "file (document n)", or the List's when it is an item of one (`item`). */
  origin: string;
  /**
   * Its index in that List (see objectOrigin). The text "file items[i]" is made only for a message:
   * one per object of a 10k-service List was 1.3 MB kept for the process's life.
   */
  item: number | undefined;
  /** Already sent while its file was read (a first read streams its objects: see Sender). */
  sent?: boolean;
  /** `object` holds only what deletes it (forgetBody): an unchanged file's objects are not redone at every read. */
  forgotten?: boolean;
}

/**
 * A first read sends each object as soon as it is read and keeps only what deletes it, instead of
 * holding every object of every file until the read ends: a 10 MB List is then never all in memory
 * at once. `send` returns false for an object it does not take (an earlier one has its key);
 * `unsend` takes back what a file sent before it failed to parse.
 */
export interface Sender {
  send(obj: ManifestObject): boolean;
  unsend(obj: ManifestObject): void;
}

/** The apiVersion each kind must have when it states one. */
const KIND_API_VERSION: Record<ManifestKind, string> = { Service: 'v1', EndpointSlice: 'discovery.k8s.io/v1', Node: 'v1' };

/** As kubectl apply: a namespaced object without a namespace is in "default". */
const DEFAULT_NAMESPACE = 'default';

/** A problem, and the key that reports it once: origin, reason and the content of its file. */
export interface KeyedProblem {
  key: string;
  problem: SourceProblem;
}

/** Where collected objects go: the read's objects by key (a first read sends as it goes) and its problems. */
export interface CollectTarget {
  objects: Map<string, ManifestObject>;
  problems: KeyedProblem[];
}

/** What one item of a JSON List gave: an object, or none and a problem. */
interface ItemMemo {
  objects: ManifestObject[];
  problems: readonly SourceProblem[];
}

/**
 * What the items of a file's JSON List gave, by index, with a hash of each item's bytes. A file that
 * changed is likely to change again (a generator rewriting it), so a read of a file read before
 * keeps these, and the next read takes an item whose bytes hash the same at the same index from
 * them: not parsed, not validated and not sent again. Only the items that changed cost anything,
 * instead of the whole file (at 10k services an 11 MB List, 20k objects, rewritten a few times a
 * second for a change of a few). The hashes are one typed array (item-hash.ts says which hash and
 * why), made by the scan of the read (json-list.ts), not the List's bytes, which no read keeps. A
 * first read keeps none: a file that never changes costs nothing for it.
 */
export interface ListMemo {
  /** Item i's bytes hashed (item-hash.ts). */
  hashes: BigUint64Array;
  /** The kind the List implies is part of what an item gives (a ServiceList's items need not say theirs). */
  impliedKind: string | undefined;
  items: ItemMemo[];
}

/**
 * A List read again with as many items as before, whose changed items kept their objects' keys:
 * the usual churn, an object's contents changing and not its name. It is applied in place, to the
 * ListMemo's items and to the file's objects, once the whole scan has read (manifests.ts), and the
 * scan then patches the source's objects by key instead of collecting them anew. Rebuilding them
 * per read made two 20k-entry arrays and a 20k-entry Map a few times a second at 10k services:
 * V8 puts arrays and Map tables that large in its large-object space, which only a full collection
 * frees, and a List rewritten five times a second grew the process by tens of MB between them.
 */
export interface ListPatch {
  /** The ListMemo's items: the memo before and the memo after share this array. */
  items: ItemMemo[];
  /** The file's objects from its read before: its items' objects, in item order. */
  objects: ManifestObject[];
  /** The changed items, in item order, and what each gives now. */
  changes: { index: number; memo: ItemMemo }[];
}

const NO_PROBLEMS: readonly SourceProblem[] = Object.freeze([]);

/** A file read before: what its List's items gave then, and what they give now (ListMemo). */
export interface ListItemsRead {
  earlier: ListMemo | undefined;
  /** Its hashes are this read's scan's (json-list.ts: a watching source's scan hashes every item). */
  now: ListMemo | undefined;
  /** The file's objects from its read before (ListPatch.objects), when that read succeeded. */
  previous: ManifestObject[] | undefined;
  /** Set while the List is read as a patch of its read before; undefined when it is read whole. */
  patch?: ListPatch;
}

/** Where collectObject puts what it finds. */
export interface Collector {
  objects: ManifestObject[];
  scan: CollectTarget;
  contentHash: string;
  sender: Sender | undefined;
  items: ListItemsRead | undefined;
}

/** Adds one object, or the items of a List (which may leave out their kind when the List names it); `item`: see ManifestObject. */
export function collectObject(value: unknown, origin: string, item: number | undefined, impliedKind: string | undefined, into: Collector): void {
  const { scan, contentHash } = into;
  if (value === null || value === undefined) return; // an empty document
  if (typeof value !== 'object' || Array.isArray(value)) {
    addProblem(scan, originText(origin, item), 'not a Kubernetes object (expected a mapping with kind and metadata)', contentHash);
    return;
  }
  const obj = value as { kind?: unknown; apiVersion?: unknown; metadata?: { name?: unknown; namespace?: unknown }; items?: unknown };
  const kind = obj.kind ?? impliedKind;
  if (typeof kind !== 'string' || kind === '') {
    addProblem(scan, originText(origin, item), 'no kind', contentHash);
    return;
  }
  if (kind.endsWith('List')) {
    // An array, or the iterable of a JSON List read item by item (manifest-parse.ts).
    const listOrigin = originText(origin, item);
    const items = obj.items;
    if (!Array.isArray(items) && !(items !== null && typeof items === 'object' && Symbol.iterator in items)) {
      addProblem(scan, listOrigin, `${kind} without an items list`, contentHash);
      return;
    }
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    let i = 0;
    for (const element of items as Iterable<unknown>) {
      if (element instanceof JsonListItem) collectListItem(element, listOrigin, itemKind, into);
      else collectObject(element, listOrigin, i, itemKind, into);
      i++;
    }
    if (into.items?.patch) finishPatch(into, into.items.patch);
    return;
  }
  if (!(kind in KIND_API_VERSION)) return; // not something the proxy reads
  const manifestKind = kind as ManifestKind;
  const apiVersion = KIND_API_VERSION[manifestKind];
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) {
    addProblem(scan, originText(origin, item), `${kind} of apiVersion ${JSON.stringify(obj.apiVersion)}: only ${apiVersion} is read`, contentHash);
    return;
  }
  const name = obj.metadata?.name;
  if (typeof name !== 'string' || name === '') {
    addProblem(scan, originText(origin, item), `${kind} without metadata.name`, contentHash);
    return;
  }
  // In place: the parser made this object for us alone. Not its metadata, which a YAML alias can
  // share between two objects.
  const normalized = obj as typeof obj & { metadata: { name: unknown; namespace?: unknown } };
  normalized.kind = kind;
  normalized.apiVersion = apiVersion;
  normalized.metadata = { ...obj.metadata, name };
  if (manifestKind === 'Node') delete normalized.metadata.namespace;
  else if (normalized.metadata.namespace === undefined || normalized.metadata.namespace === '') {
    normalized.metadata.namespace = DEFAULT_NAMESPACE;
  }
  const ns: unknown = normalized.metadata.namespace;
  // Not a string: refused below by validation; written as JSON meanwhile, to name the object recognisably.
  const namespace = manifestKind === 'Node' ? '' : typeof ns === 'string' ? ns : JSON.stringify(ns);
  const valid = validateObject(manifestKind, normalized);
  if ('reason' in valid) {
    const ref = printable(namespace ? `${namespace}/${name}` : name);
    addProblem(scan, `${kind} ${ref} in ${originText(origin, item)}`, valid.reason, contentHash, { kind, ref });
    return;
  }
  const key = flat(kind, '/', namespace, '/', name);
  const found: ManifestObject = { kind: manifestKind, key, object: valid.object, origin, item, sent: false, forgotten: false };
  into.objects.push(found);
  // A first read sends it now (and then keeps only what deletes it), unless its key is taken.
  if (into.sender && !scan.objects.has(key)) {
    scan.objects.set(key, found);
    into.sender.send(found);
  }
}

/** Where an object was read, as messages name it: "<document>", or "<the List's origin> items[i]". */
function originText(origin: string, item: number | undefined): string {
  return item === undefined ? origin : `${origin} items[${item}]`;
}

export function objectOrigin(obj: ManifestObject): string {
  return originText(obj.origin, obj.item);
}

/** An item of a JSON List read item by item: from what the same bytes gave before, or parsed (ListMemo). */
function collectListItem(item: JsonListItem, listOrigin: string, impliedKind: string | undefined, into: Collector): void {
  const index = item.index;
  const read = into.items;
  if (!read) {
    collectObject(item.value(), listOrigin, index, impliedKind, into);
    return;
  }
  const earlier = read.earlier?.impliedKind === impliedKind ? read.earlier : undefined;
  if (!read.now) {
    // As many items as before: read as a patch of the read before (ListPatch), if it turns out one.
    const sameLength = earlier !== undefined && earlier.items.length === item.listLength;
    const patching = sameLength && read.previous !== undefined;
    read.now = { hashes: item.listHashes, impliedKind, items: patching ? earlier.items : [] };
    if (patching) read.patch = { items: earlier.items, objects: read.previous!, changes: [] };
  }
  const hash = read.now.hashes[index];
  let memo = earlier !== undefined && index < earlier.hashes.length && earlier.hashes[index] === hash ? earlier.items[index] : undefined;
  if (memo) {
    // Under this read's content hash: a changed file reports its problems again, as a parse would.
    for (const p of memo.problems) addProblem(into.scan, p.origin, p.reason, into.contentHash, p.object);
    if (read.patch) return;
    for (const obj of memo.objects) into.objects.push(obj);
  } else {
    const objects = into.objects;
    const problems = into.scan.problems.length;
    into.objects = [];
    try {
      collectObject(item.value(), listOrigin, index, impliedKind, into);
    } finally {
      const found = into.objects;
      into.objects = objects;
      memo = { objects: found, problems: into.scan.problems.length > problems ? into.scan.problems.slice(problems).map(({ problem }) => problem) : NO_PROBLEMS };
    }
    if (read.patch) {
      read.patch.changes.push({ index, memo });
      return;
    }
    for (const obj of memo.objects) objects.push(obj);
  }
  read.now.items.push(memo);
}

/**
 * The end of a List read as a patch: kept as one if every changed item gives objects of the same
 * keys as before; else read whole after all, from what the patch holds (nothing is parsed again).
 */
function finishPatch(into: Collector, patch: ListPatch): void {
  const read = into.items!;
  const keysKept = patch.changes.every(({ index, memo }) => {
    const before = patch.items[index]!.objects;
    return before.length === memo.objects.length && before.every((obj, j) => obj.key === memo.objects[j]!.key);
  });
  if (keysKept) return;
  const items = patch.items.slice();
  for (const { index, memo } of patch.changes) items[index] = memo;
  for (const memo of items) for (const obj of memo.objects) into.objects.push(obj);
  read.now!.items = items;
  read.patch = undefined;
}

/**
 * Applies a ListPatch in place, once its scan has read everything; adds each replaced object and
 * its replacement to `replaced`, two by two.
 */
export function applyListPatch(patch: ListPatch, replaced: ManifestObject[]): void {
  let at = 0;
  let next = 0;
  for (let i = 0; i < patch.items.length && next < patch.changes.length; i++) {
    const change = patch.changes[next]!;
    if (change.index === i) {
      const before = patch.items[i]!.objects;
      change.memo.objects.forEach((obj, j) => {
        replaced.push(before[j]!, obj);
        patch.objects[at + j] = obj;
      });
      patch.items[i] = change.memo;
      next++;
    }
    at += patch.items[i]!.objects.length;
  }
}

export function addProblem(target: { problems: KeyedProblem[] }, origin: string, reason: string, contentHash: string, object?: SourceProblem['object']): void {
  const problem: SourceProblem = object ? { origin, reason, object } : { origin, reason };
  target.problems.push({ key: `${origin}\n${reason}\n${contentHash}`, problem });
}
