// A set's dumped elements -> SetElement[]: plain sets read in place (the fast path), interval sets
// with their start and end markers paired into ranges. Also how a transaction reads back the
// elements it streamed into its request (same format).

import type { NftSet, SetElement } from '../../objects.js';
import type { Datatype } from '../../types/datatypes.js';
import { verdictFromCode } from '../../types/verdict.js';
import { decodeValues, rangesFromIntervalElements, readValues, splitFields } from '../../values.js';
import { ELEM_ATTR, UDATA } from '../attrs.js';
import { NFT_SET_ELEM_F } from '../constants.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes, getStr, getU32, getU64Number } from './attr-values.js';
import type { ElementVisitor, WireElement, WireObject } from './wire-objects.js';
import { WireReader } from './wire-reader.js';

function elementPayload(s: NftSet, e: WireElement, out: SetElement): void {
  if (s.data === 'verdict') {
    const code = getU32(e.attrs, ELEM_ATTR.VERDICT);
    if (code !== undefined) out.value = verdictFromCode(code, getStr(e.attrs, ELEM_ATTR.CHAIN));
  } else if (s.data) {
    const data = getBytes(e.attrs, ELEM_ATTR.DATA);
    if (data) out.value = decodeValues(s.data, data);
  }
  const timeout = getU64Number(e.attrs, ELEM_ATTR.TIMEOUT);
  if (timeout !== undefined) out.timeout = timeout;
  const expires = getU64Number(e.attrs, ELEM_ATTR.EXPIRATION);
  if (expires !== undefined) out.expires = expires;
  const udata = getBytes(e.attrs, ELEM_ATTR.USERDATA);
  if (udata) {
    const comment = udataString(parseUdata(udata).get(UDATA.SET_ELEM_COMMENT));
    if (comment !== undefined) out.comment = comment;
  }
}

/** Decodes the wire elements of a set (interval sets pair their start and end markers). */
export function decodeElements(s: NftSet, elems: readonly WireElement[]): SetElement[] {
  const interval = (s.flags ?? []).includes('interval');
  if (interval && s.key.length === 1) {
    const type: Datatype = s.key[0]!;
    const marks = elems.map((e, index) => ({
      key: getBytes(e.attrs, ELEM_ATTR.KEY) ?? new Uint8Array(type.size),
      end: ((getU32(e.attrs, ELEM_ATTR.FLAGS) ?? 0) & NFT_SET_ELEM_F.interval_end) !== 0,
      index,
    }));
    return rangesFromIntervalElements(type, marks).map((r) => {
      const out: SetElement = { key: [type.toValue(r.from)] };
      if (!bytesEqual(r.from, r.to)) out.keyEnd = [type.toValue(r.to)];
      elementPayload(s, elems[r.index]!, out);
      return out;
    });
  }
  return elems.map((e) => {
    const key = getBytes(e.attrs, ELEM_ATTR.KEY) ?? new Uint8Array(0);
    const out: SetElement = { key: decodeValues(s.key, key) };
    const keyEnd = getBytes(e.attrs, ELEM_ATTR.KEY_END);
    if (keyEnd) {
      const from = splitFields(s.key, key);
      const to = splitFields(s.key, keyEnd);
      if (from.some((f, i) => !bytesEqual(f, to[i]!))) out.keyEnd = decodeValues(s.key, keyEnd);
    }
    elementPayload(s, e, out);
    return out;
  });
}

/**
 * The elements of one dump object, appended to `into`. Plain (non-interval) sets take the fast
 * path: attributes are read in place, one SetElement and its value arrays allocated per element and
 * nothing else (no array per part to copy from: a 100k-element dump arrives in about 100 parts).
 */
export function decodeElementsOf(s: NftSet, o: WireObject, into: SetElement[], keys?: string[]): void {
  if ((s.flags ?? []).includes('interval')) {
    for (const e of decodeElements(s, o.readElements())) into.push(e);
    return;
  }
  decodePlainElements(s, (visit) => o.visitElements(visit), into, keys);
}

/**
 * The elements a request buffer holds from `at` on: how a transaction gives back the elements it
 * was handed as a stream (an iterable it encoded without keeping), for render() and error messages.
 * The request and a dump's reply share one format (native/README.md), so this is the dump's decoder.
 * Appended to `into`.
 */
export function decodeRequestElements(s: NftSet, buf: Uint8Array, at: number, count: number, into: SetElement[] = []): SetElement[] {
  return decodePlainElements(s, (visit) => new WireReader(buf).visit(at, count, visit), into);
}

function decodePlainElements(s: NftSet, visitAll: (visit: ElementVisitor) => void, out: SetElement[], keys?: string[]): SetElement[] {
  const key = s.key;
  const data = s.data;
  const dv = { buf: undefined as Uint8Array | undefined, view: undefined as DataView | undefined, bytes: undefined as Buffer | undefined };
  visitAll((buf, off, len, exprs) => {
    if (dv.buf !== buf) {
      dv.buf = buf;
      dv.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      dv.bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    }
    const view = dv.view!;
    // The identity elementKey() gives a plain set's element: its key bytes, one character each.
    if (keys) keys.push(off[ELEM_ATTR.KEY]! >= 0 ? dv.bytes!.toString('latin1', off[ELEM_ATTR.KEY]!, off[ELEM_ATTR.KEY]! + len[ELEM_ATTR.KEY]!) : '');
    let value: SetElement['value'];
    if (data === 'verdict') {
      if (off[ELEM_ATTR.VERDICT]! >= 0) {
        const code = view.getUint32(off[ELEM_ATTR.VERDICT]!, true);
        const chainAt = off[ELEM_ATTR.CHAIN]!;
        const chain = chainAt >= 0 ? cString(buf, chainAt, len[ELEM_ATTR.CHAIN]!) : undefined;
        value = verdictFromCode(code, chain);
      }
    } else if (data && off[ELEM_ATTR.DATA]! >= 0) {
      value = readValues(data, buf, off[ELEM_ATTR.DATA]!);
    }
    // One literal with both fields: the object gets its final shape at once (a property added
    // later costs a separate backing store per element; 120k of them at 10k services).
    const k = off[ELEM_ATTR.KEY]! >= 0 ? readValues(key, buf, off[ELEM_ATTR.KEY]!) : [];
    const e: SetElement = value === undefined ? { key: k } : { key: k, value };
    if (off[ELEM_ATTR.KEY_END]! >= 0) {
      const end = buf.subarray(off[ELEM_ATTR.KEY_END]!, off[ELEM_ATTR.KEY_END]! + len[ELEM_ATTR.KEY_END]!);
      const from = buf.subarray(off[ELEM_ATTR.KEY]!, off[ELEM_ATTR.KEY]! + len[ELEM_ATTR.KEY]!);
      if (!bytesEqual(from, end)) e.keyEnd = readValues(key, buf, off[ELEM_ATTR.KEY_END]!);
    }
    if (off[ELEM_ATTR.TIMEOUT]! >= 0) e.timeout = Number(view.getBigUint64(off[ELEM_ATTR.TIMEOUT]!, true));
    if (off[ELEM_ATTR.EXPIRATION]! >= 0) e.expires = Number(view.getBigUint64(off[ELEM_ATTR.EXPIRATION]!, true));
    if (off[ELEM_ATTR.USERDATA]! >= 0) {
      const comment = udataString(parseUdata(buf.subarray(off[ELEM_ATTR.USERDATA]!, off[ELEM_ATTR.USERDATA]! + len[ELEM_ATTR.USERDATA]!)).get(UDATA.SET_ELEM_COMMENT));
      if (comment !== undefined) e.comment = comment;
    }
    void exprs;
    out.push(e);
  });
  return out;
}

const cDecoder = new TextDecoder();
function cString(buf: Uint8Array, at: number, len: number): string {
  let end = at;
  while (end < at + len && buf[end] !== 0) end++;
  return cDecoder.decode(buf.subarray(at, end));
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
