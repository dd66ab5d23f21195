// Element messages (NEWSETELEM, DELSETELEM, DESTROYSETELEM): a plain set's or map's list written
// straight into the buffer (the hot path of large syncs, element-writer.ts), cut into operations
// under the 64 KiB of one kernel message while a sink takes them; interval sets as nft's start and
// end markers; concatenated intervals with a KEY_END.

import type { NftSet, SetElement } from '../../objects.js';
import type { Verb } from '../../operations.js';
import type { Datatype, Scalar } from '../../types/datatypes.js';
import { verdictCode, type Verdict } from '../../types/verdict.js';
import { hasRangeSyntax, intervalElements, parseIntervalValue, valuesLength, writeValues } from '../../values.js';
import { ELEM_ATTR, SET_ATTR } from '../attrs.js';
import { NFT_MSG, NFT_SET_ELEM_F } from '../constants.js';
import { commentUdata } from '../udata.js';
import { WireKind } from '../wire-format.js';
import type { WireWriter } from './wire-writer.js';
import { dataElement, ElementOutput, verdictElement, type ElementInspector } from './element-writer.js';
import { createFlags, noExprs, type MessageWriter } from './message-writer.js';

/** Where an element operation's elements sit in the request buffer (after their u32 count). */
export interface ElementRun {
  at: number;
  count: number;
}

/**
 * While a sink is attached, a plain element list is cut into operations of about this many bytes,
 * so that a long one can be fed before it ends. Below the 64 KiB that one kernel element message
 * holds, so each becomes one message of the batch, as the addon's own cut would have made it. A
 * refusal still names the caller's element (WireOrigins.callerElement). Without a sink a list
 * stays one operation: the cuts cost a cold build measurable interpreted and TurboFan time for
 * nothing to feed (docs/decisions.md).
 */
const ELEMENT_OP_BYTES = 32 * 1024;
/** A cut position never reached (a small integer for V8, unlike Infinity). */
const NO_CUT = 0x3fffffff;

/** A plain element list being written, one operation per ELEMENT_OP_BYTES (nextElementOp). */
interface ElementList {
  /** Where the current operation's element count sits. */
  countAt: number;
  /** The caller's index of the current operation's first element. */
  first: number;
  /** The operations written before it. */
  runs: ElementRun[];
  /** What the next operation's header names (elementHeader). */
  verb: Verb;
  set: NftSet;
  setId: number | undefined;
}

/** The elements of an element operation, or of a set created with them (`setId`: its transaction id). */
export function encodeElements(m: MessageWriter, verb: Verb, s: NftSet, elements: readonly SetElement[], setId?: number): void {
  const interval = (s.flags ?? []).includes('interval') || s.anonymous === true && elements.some((e) => hasRangeSyntax(s, e));
  if (!interval) elementMessage(m, verb, s, setId, undefined, (isNew, what) => plainElements(m, verb, s, setId, elements, isNew, what));
  else if (s.key.length === 1) rangeElements(m, verb, s, elements, setId);
  else elementMessage(m, verb, s, setId, undefined, (isNew, what) => concatRangeElements(m, s, elements, isNew, what));
}

/**
 * The elements of a plain (non-interval) set taken from an iterable, each written as it is
 * produced and none kept (see RequestEncoder.addElementStream). Returns where they sit.
 */
export function encodeElementStream(m: MessageWriter, verb: Verb, s: NftSet, source: Iterable<SetElement>, inspect: ElementInspector): ElementRun[] {
  return elementMessage(m, verb, s, undefined, undefined, (isNew, what) => plainElements(m, verb, s, undefined, source, isNew, what, inspect));
}

/**
 * Whether this set's elements can be encoded one at a time, in the order they come (and so taken
 * from a stream): not an interval set, whose ranges are sorted and paired first, and not an
 * anonymous set, whose elements may be ranges (hasRangeSyntax).
 */
export function streamsElements(s: NftSet): boolean {
  return !s.anonymous && !(s.flags ?? []).includes('interval');
}

/** The set an element message (or a set flush) is about, with the attributes' list around it. */
export function setReference(w: WireWriter, s: NftSet, id: number | undefined): void {
  w.openList();
  w.attrStr(SET_ATTR.TABLE, s.table);
  // A set created in this batch goes by its transaction id alone. Why: with a name, the kernel
  // walks every set of the table comparing names before it tries the id (nft_set_lookup_global);
  // by id it walks the transaction backwards and finds the set just created at once
  // (docs/decisions.md).
  if (id !== undefined) w.attrU32(SET_ATTR.ID, id);
  else w.attrStr(SET_ATTR.NAME, s.name);
  w.closeList();
}

/**
 * The element message of a set: its header, then what `body` writes. `sources` maps wire
 * elements to the caller's where they differ (interval markers).
 */
function elementMessage<T>(
  m: MessageWriter,
  verb: Verb,
  s: NftSet,
  setId: number | undefined,
  sources: Int32Array | undefined,
  body: (isNew: boolean, what: string) => T,
): T {
  elementHeader(m, verb, s, setId, sources);
  return body(elementMsgType(verb) === NFT_MSG.NEWSETELEM, describeSet(s));
}

/** The header of an element message, also of each later one of a long list (nextElementOp). */
function elementHeader(m: MessageWriter, verb: Verb, s: NftSet, setId: number | undefined, sources: Int32Array | undefined): void {
  m.begin(elementMsgType(verb), WireKind.Elements, createFlags(verb), s.family, sources);
  setReference(m.w, s, setId);
  noExprs(m.w);
}

/** A single-field interval set: nft's start and end markers (intervalElements), sorted. */
function rangeElements(m: MessageWriter, verb: Verb, s: NftSet, elements: readonly SetElement[], setId: number | undefined): void {
  const isNew = elementMsgType(verb) === NFT_MSG.NEWSETELEM;
  const what = describeSet(s);
  const type = s.key[0]!;
  const ranges = elements.map((e, i) => parseIntervalValue(type, e.key[0]!, e.keyEnd?.[0], `${what} element ${i}`));
  // Deleting ranges must leave nft's leading marker alone: the other ranges still need it.
  const wire = intervalElements(type, ranges, what, s.anonymous === true && !s.data).filter((e) => isNew || e.source >= 0);
  const w = m.w;
  elementMessage(m, verb, s, setId, Int32Array.from(wire, (e) => e.source), () => {
    w.openList(true);
    for (const we of wire) {
      const src = we.source >= 0 ? elements[we.source]! : undefined;
      w.item();
      w.openList();
      w.attrBytes(ELEM_ATTR.KEY, we.key);
      if (we.end) w.attrU32(ELEM_ATTR.FLAGS, NFT_SET_ELEM_F.interval_end);
      else if (src && isNew) elementPayload(w, s, src, what, we.source);
      w.closeList();
      noExprs(w);
    }
    w.closeList();
  });
}

/** Concatenated intervals (pipapo, Linux 5.6): each element's key and an inclusive KEY_END. */
function concatRangeElements(m: MessageWriter, s: NftSet, elements: readonly SetElement[], isNew: boolean, what: string): void {
  const w = m.w;
  w.openList(true);
  for (let i = 0; i < elements.length; i++) {
    const e = elements[i]!;
    w.item();
    w.openList();
    const from = s.key.map((t, f) => parseIntervalValue(t, e.key[f]!, e.keyEnd?.[f], `${what} element ${i}`));
    w.attrBytes(ELEM_ATTR.KEY, encodeConcatBytes(s.key, from.map((r) => r.from)));
    w.attrBytes(ELEM_ATTR.KEY_END, encodeConcatBytes(s.key, from.map((r) => r.to)));
    if (isNew) elementPayload(w, s, e, what, i);
    w.closeList();
    noExprs(w);
  }
  w.closeList();
}

/**
 * Elements of a plain set or map: the hot path of large syncs (100,000 elements in one
 * transaction), written straight into the buffer. Verdict maps and the rest have a loop each, so
 * that V8 sees one shape of element value per loop: one loop for both (an array of values here, a
 * verdict object there) was deoptimised and compiled again when a transaction held both kinds
 * (Node 20, docs/decisions.md).
 */
function plainElements(
  m: MessageWriter,
  verb: Verb,
  s: NftSet,
  setId: number | undefined,
  elements: Iterable<SetElement>,
  isNew: boolean,
  what: string,
  inspect?: ElementInspector,
): ElementRun[] {
  const list = openElementList(m.w, verb, s, setId);
  if (isNew && s.objects !== undefined) return objectElements(m, s, elements, what, list, inspect);
  return isNew && s.data === 'verdict' ? verdictElements(m, s, elements, what, list, inspect) : dataElements(m, s, elements, isNew, what, list, inspect);
}

function openElementList(w: WireWriter, verb: Verb, set: NftSet, setId: number | undefined): ElementList {
  const countAt = w.length;
  // The count is patched at the end: an iterable tells it only by ending.
  w.u32(0);
  return { countAt, first: 0, runs: [], verb, set, setId };
}

/**
 * Ends the list's current operation before element `i` and opens the next for the same set,
 * then feeds what is finished. Returns the position at which the next one is due. Called
 * through the list's ElementOutput, with the writer at the current position.
 */
function nextElementOp(m: MessageWriter, list: ElementList, i: number): number {
  const w = m.w;
  w.patchU32(list.countAt, i - list.first);
  list.runs.push({ at: list.countAt + 4, count: i - list.first });
  const opAt = w.length;
  elementHeader(m, list.verb, list.set, list.setId, undefined);
  m.origins.setElementBase(i);
  list.countAt = w.length;
  list.first = i;
  w.u32(0);
  m.offer(opAt, m.origins.length - 1);
  return w.length + ELEMENT_OP_BYTES;
}

/** The writer of a list's elements, which ends its operations where they are due. */
function elementOutput(m: MessageWriter, list: ElementList): ElementOutput {
  const w = m.w;
  const cutAt = m.streaming ? w.length + ELEMENT_OP_BYTES : NO_CUT;
  return new ElementOutput(w, cutAt, (i, due) => (w.length >= due ? nextElementOp(m, list, i) : due));
}

function closeElementList(w: WireWriter, list: ElementList, end: number): ElementRun[] {
  w.patchU32(list.countAt, end - list.first);
  list.runs.push({ at: list.countAt + 4, count: end - list.first });
  return list.runs;
}

/**
 * Keys, and the values of a data map. Elements with a comment or a timeout take the general path.
 * The loop is small and each element is written by a function of its own (dataElement): V8
 * optimises a function after a number of bytecodes that grows with its size, and a loop that
 * runs once, as a dispatch map's 10,000 elements do, got its optimised code only after it had
 * ended when loop and element were one function (Node 20).
 */
function dataElements(m: MessageWriter, s: NftSet, elements: Iterable<SetElement>, isNew: boolean, what: string, list: ElementList, inspect?: ElementInspector): ElementRun[] {
  const w = m.w;
  const keyLen = valuesLength(s.key);
  const data = isNew && s.data !== undefined && s.data !== 'verdict' ? s.data : undefined;
  const dataLen = data ? valuesLength(data) : 0;
  // One element: attr count, KEY, then DATA, then an empty expression list.
  const fixed = 2 + 6 + keyLen + (data ? 6 + dataLen : 0) + 2;
  if (Array.isArray(elements)) w.expect(fixed * elements.length);
  const out = elementOutput(m, list);
  let i = 0;
  for (const e of elements) {
    if (e.comment !== undefined || e.timeout !== undefined) outOfLine(w, out, s, e, isNew, what, i, inspect);
    else dataElement(out, s.key, keyLen, data, dataLen, fixed, e, what, i);
    i++;
  }
  out.handOver();
  return closeElementList(w, list, i);
}

/**
 * Elements of a verdict map being added: key, verdict and, for a jump or goto, the chain's name
 * (kube-proxy's dispatch maps: every element is `... : goto <service chain>`). Elements with a
 * comment, a timeout or a chain name that is not ASCII take the general path.
 */
function verdictElements(m: MessageWriter, s: NftSet, elements: Iterable<SetElement>, what: string, list: ElementList, inspect?: ElementInspector): ElementRun[] {
  const w = m.w;
  const keyLen = valuesLength(s.key);
  const out = elementOutput(m, list);
  let i = 0;
  for (const e of elements) {
    if (!verdictElement(out, s.key, keyLen, e, what, i, inspect)) outOfLine(w, out, s, e, true, what, i, inspect);
    i++;
  }
  out.handOver();
  return closeElementList(w, list, i);
}

/** Elements of a map of named objects being added: each through the general path (elementPayload). */
function objectElements(m: MessageWriter, s: NftSet, elements: Iterable<SetElement>, what: string, list: ElementList, inspect?: ElementInspector): ElementRun[] {
  const out = elementOutput(m, list);
  let i = 0;
  for (const e of elements) outOfLine(m.w, out, s, e, true, what, i++, inspect);
  out.handOver();
  return closeElementList(m.w, list, i);
}

/** An element of a hot loop that takes the general path (generalElement). */
function outOfLine(w: WireWriter, out: ElementOutput, s: NftSet, e: SetElement, isNew: boolean, what: string, i: number, inspect: ElementInspector | undefined): void {
  // Ends the operation here if it is due (the element's own room is the writer's to make).
  out.slowRoom(0, i);
  out.handOver();
  generalElement(w, s, e, isNew, what, i, inspect);
  out.takeBack();
}

/** One element through the attribute writer (after `inspect` has seen it). */
function generalElement(w: WireWriter, s: NftSet, e: SetElement, isNew: boolean, what: string, i: number, inspect?: ElementInspector): void {
  inspect?.(e, i);
  w.openList();
  attrValues(w, ELEM_ATTR.KEY, s.key, e.key, what, i, 'key');
  if (isNew) elementPayload(w, s, e, what, i);
  w.closeList();
  noExprs(w);
}

function elementPayload(w: WireWriter, s: NftSet, e: SetElement, what: string, i: number): void {
  if (s.data === 'verdict') {
    const v = e.value as Verdict | undefined;
    if (!v || Array.isArray(v)) throw new RangeError(`${what} element ${i}: a verdict map element needs a verdict value`);
    w.attrU32(ELEM_ATTR.VERDICT, verdictCode(v));
    if (v.kind === 'jump' || v.kind === 'goto') w.attrStr(ELEM_ATTR.CHAIN, v.chain);
  } else if (s.objects !== undefined) {
    const name = Array.isArray(e.value) ? e.value[0] : undefined;
    if (typeof name !== 'string' || name.length === 0) throw new RangeError(`${what} element ${i}: an element of a map of ${s.objects} objects needs the object's name as its value, ['name']`);
    w.attrStr(ELEM_ATTR.OBJREF, name);
  } else if (s.data) {
    if (!Array.isArray(e.value)) throw new RangeError(`${what} element ${i}: a map element needs a value`);
    attrValues(w, ELEM_ATTR.DATA, s.data, e.value, what, i, 'value');
  }
  if (e.timeout !== undefined) w.attrU64(ELEM_ATTR.TIMEOUT, BigInt(e.timeout));
  const ud = commentUdata(e.comment);
  if (ud) w.attrBytes(ELEM_ATTR.USERDATA, ud);
}

/** Element keys and values go straight into the request buffer: no allocation per element. */
function attrValues(w: WireWriter, id: number, types: readonly Datatype[], values: readonly Scalar[], what: string, i: number, part: string): void {
  const at = w.attrInPlace(id, valuesLength(types));
  try {
    writeValues(types, values, w.bytes, at);
  } catch (err) {
    throw new RangeError(`${what} element ${i} ${part}: ${(err as Error).message}`);
  }
}

function encodeConcatBytes(types: readonly Datatype[], parts: readonly Uint8Array[]): Uint8Array {
  if (types.length === 1) return parts[0]!;
  const total = types.reduce((s, t) => s + Math.ceil(t.size / 4) * 4, 0);
  const out = new Uint8Array(total);
  let at = 0;
  types.forEach((t, i) => {
    out.set(parts[i]!, at);
    at += Math.ceil(t.size / 4) * 4;
  });
  return out;
}

/** The element message a verb sends: delete and destroy remove, every other verb adds. */
function elementMsgType(verb: Verb): number {
  return verb === 'delete' ? NFT_MSG.DELSETELEM : verb === 'destroy' ? NFT_MSG.DESTROYSETELEM : NFT_MSG.NEWSETELEM;
}

/** How errors name a set: `map kube-proxy service-ips`. */
function describeSet(s: NftSet): string {
  return `${s.data || s.objects ? 'map' : 'set'} ${s.table} ${s.name}`;
}
