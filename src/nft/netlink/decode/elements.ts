// A set's dumped elements -> SetElement[]: plain sets read in place (the fast path), interval sets
// as ranges (single-field ones from their start and end markers, interval-elements.ts). Also how a
// transaction reads back the elements it streamed into its request (same format).

import { cString } from '../../c-string.js';
import { elementHash, putBytes, putText, sortedDistinct, startElement } from '../../element-hash.js';
import type { NftSet, SetElement } from '../../objects.js';
import { verdictFromCode, type Verdict } from '../../types/verdict.js';
import { decodeValues, readValues, splitFields } from '../../values.js';
import { ELEM_ATTR, UDATA } from '../attrs.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes } from './attr-values.js';
import { elementPayload } from './element-payload.js';
import { hasIntervalMarkers, IntervalMarks } from './interval-elements.js';
import type { ElementVisitor, WireElement, WireObject } from './wire-objects.js';
import { WireReader } from './wire-reader.js';

/** A concatenated interval set's elements: each a range of its own, from KEY to KEY_END. */
function decodeConcatRanges(s: NftSet, elems: readonly WireElement[], into: SetElement[]): void {
  for (const e of elems) {
    const key = getBytes(e.attrs, ELEM_ATTR.KEY) ?? new Uint8Array(0);
    const out: SetElement = { key: decodeValues(s.key, key) };
    const keyEnd = getBytes(e.attrs, ELEM_ATTR.KEY_END);
    if (keyEnd) {
      const from = splitFields(s.key, key);
      const to = splitFields(s.key, keyEnd);
      if (from.some((f, i) => !bytesEqual(f, to[i]!))) out.keyEnd = decodeValues(s.key, keyEnd);
    }
    elementPayload(s, e, out);
    into.push(out);
  }
}

/**
 * The elements of one set from the dump objects that carry them (a dump gives a large set in
 * several), appended to `into`. Plain (non-interval) sets take the fast path: attributes are read
 * in place, one SetElement and its value arrays allocated per element and nothing else (no array
 * per part to copy from: a 100k-element dump arrives in about 100 parts). A single-field interval
 * set's markers are paired in finish(), once every object is in (interval-elements.ts).
 */
export class SetElementsDecoder {
  private readonly marks: IntervalMarks | undefined;
  private readonly interval: boolean;

  constructor(
    private readonly set: NftSet,
    private readonly into: SetElement[],
    private readonly keys?: string[],
  ) {
    this.marks = hasIntervalMarkers(set) ? new IntervalMarks(set) : undefined;
    this.interval = (set.flags ?? []).includes('interval');
  }

  add(o: WireObject): void {
    if (this.marks) this.marks.add(o.readElements());
    else if (this.interval) decodeConcatRanges(this.set, o.readElements(), this.into);
    else decodePlainElements(this.set, (visit) => o.visitElements(visit), this.into, this.keys);
  }

  /** Appends the interval set's ranges (the others are appended as they come); returns them all. */
  finish(): SetElement[] {
    if (this.marks) for (const e of this.marks.finish()) this.into.push(e);
    return this.into;
  }
}

/**
 * A plain set's dumped elements hashed as they are read (element-hash.ts), not decoded: a caller
 * that compares them by hashes (reconcile/element-hashes.ts) and finds them equal never needs the
 * element objects. The dump's objects are kept, and decoded if someone reads the elements after all.
 */
export class HashedSetElements {
  private readonly objects: WireObject[] = [];
  private hashes = new Float64Array(256);
  private count = 0;
  /** False once an element is not one the hashes cover (a range, an object reference). */
  private covered = true;
  /** The addon's answer (takeNative): its hashes, or null when it declined an element. */
  private native: Float64Array | null | undefined;

  /**
   * `nativeHashes`: the addon hashes the elements (native/element-hash.h), and this only when it
   * declines (an element with text other than ASCII, or one the hashes do not cover).
   */
  constructor(
    private readonly set: NftSet,
    private readonly nativeHashes = false,
  ) {}

  private readonly viewOf = viewsOf();

  add(o: WireObject): void {
    this.objects.push(o);
    if (!this.nativeHashes) this.hashAll(o);
  }

  /** The addon's kind-8 op for this set: the hashes' bytes, or undefined when it declined. */
  takeNative(bytes: Uint8Array | undefined): void {
    if (bytes && bytes.length % 8 !== 0) throw new Error(`nftlink: malformed element hashes from the addon (${bytes.length} bytes)`);
    // Copied: the reply's bytes are not aligned for a Float64Array.
    this.native = bytes ? new Float64Array(bytes.slice().buffer) : null;
  }

  private hashAll(o: WireObject): void {
    if (this.covered) o.visitElements((buf, off, len) => this.hashOne(buf, off, len));
  }

  /** The same bytes, in the same order, as elementHashes() writes for the decoded element. */
  private hashOne(buf: Uint8Array, off: Int32Array, len: Int32Array): void {
    if (!this.covered) return;
    if (off[ELEM_ATTR.OBJREF]! >= 0 || isRange(buf, off, len)) {
      this.covered = false;
      return;
    }
    startElement();
    if (off[ELEM_ATTR.KEY]! >= 0) putBytes(buf, off[ELEM_ATTR.KEY]!, len[ELEM_ATTR.KEY]!);
    if (this.set.data === 'verdict') {
      const v = verdictAt(this.viewOf(buf), buf, off, len);
      if (v) {
        putText(v.kind);
        putText('chain' in v ? v.chain : '');
      }
    } else if (this.set.data && off[ELEM_ATTR.DATA]! >= 0) putBytes(buf, off[ELEM_ATTR.DATA]!, len[ELEM_ATTR.DATA]!);
    const comment = commentAt(buf, off, len);
    if (comment !== undefined) putText(comment);
    if (off[ELEM_ATTR.TIMEOUT]! >= 0) putText(String(Number(this.viewOf(buf).getBigUint64(off[ELEM_ATTR.TIMEOUT]!, true))));
    if (this.count === this.hashes.length) {
      const next = new Float64Array(this.hashes.length * 2);
      next.set(this.hashes);
      this.hashes = next;
    }
    this.hashes[this.count++] = elementHash();
  }

  /** The elements' hashes, sorted and de-duplicated; undefined if some element is not covered. */
  finish(): Float64Array | undefined {
    if (this.native) return this.native;
    if (this.nativeHashes) for (const o of this.objects) this.hashAll(o);
    return this.covered ? sortedDistinct(this.hashes, this.count) : undefined;
  }

  /** The elements decoded (and their identities into `keys`, when given). */
  decode(keys?: string[]): SetElement[] {
    const out: SetElement[] = [];
    for (const o of this.objects) decodePlainElements(this.set, (visit) => o.visitElements(visit), out, keys);
    return out;
  }

  /** The elements' identities only, in decode()'s order. */
  identities(): string[] {
    const out: string[] = [];
    let last: Uint8Array | undefined;
    let bytes: Buffer | undefined;
    for (const o of this.objects) {
      o.visitElements((buf, off, len) => {
        if (last !== buf) (last = buf), (bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
        out.push(identityOf(bytes!, off, len));
      });
    }
    return out;
  }
}

/** The identity elementKey() gives a plain set's element: its key bytes, one character each. */
function identityOf(bytes: Buffer, off: Int32Array, len: Int32Array): string {
  return off[ELEM_ATTR.KEY]! >= 0 ? bytes.toString('latin1', off[ELEM_ATTR.KEY]!, off[ELEM_ATTR.KEY]! + len[ELEM_ATTR.KEY]!) : '';
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
    if (keys) keys.push(identityOf(dv.bytes!, off, len));
    let value: SetElement['value'];
    if (data === 'verdict') {
      value = verdictAt(view, buf, off, len);
    } else if (data && off[ELEM_ATTR.DATA]! >= 0) {
      value = readValues(data, buf, off[ELEM_ATTR.DATA]!);
    } else if (off[ELEM_ATTR.OBJREF]! >= 0) {
      value = [cString(buf, off[ELEM_ATTR.OBJREF]!, off[ELEM_ATTR.OBJREF]! + len[ELEM_ATTR.OBJREF]!)];
    }
    // One literal with both fields: the object gets its final shape at once (a property added
    // later costs a separate backing store per element; 120k of them at 10k services).
    const k = off[ELEM_ATTR.KEY]! >= 0 ? readValues(key, buf, off[ELEM_ATTR.KEY]!) : [];
    const e: SetElement = value === undefined ? { key: k } : { key: k, value };
    if (isRange(buf, off, len)) e.keyEnd = readValues(key, buf, off[ELEM_ATTR.KEY_END]!);
    if (off[ELEM_ATTR.TIMEOUT]! >= 0) e.timeout = Number(view.getBigUint64(off[ELEM_ATTR.TIMEOUT]!, true));
    if (off[ELEM_ATTR.EXPIRATION]! >= 0) e.expires = Number(view.getBigUint64(off[ELEM_ATTR.EXPIRATION]!, true));
    const comment = commentAt(buf, off, len);
    if (comment !== undefined) e.comment = comment;
    void exprs;
    out.push(e);
  });
  return out;
}

/** A verdict map element's verdict, or undefined without one. */
function verdictAt(view: DataView, buf: Uint8Array, off: Int32Array, len: Int32Array): Verdict | undefined {
  if (off[ELEM_ATTR.VERDICT]! < 0) return undefined;
  const chainAt = off[ELEM_ATTR.CHAIN]!;
  return verdictFromCode(view.getUint32(off[ELEM_ATTR.VERDICT]!, true), chainAt >= 0 ? cString(buf, chainAt, chainAt + len[ELEM_ATTR.CHAIN]!) : undefined);
}

/** The element's comment, from its userdata; undefined without one. */
function commentAt(buf: Uint8Array, off: Int32Array, len: Int32Array): string | undefined {
  const at = off[ELEM_ATTR.USERDATA]!;
  return at >= 0 ? udataString(parseUdata(buf.subarray(at, at + len[ELEM_ATTR.USERDATA]!)).get(UDATA.SET_ELEM_COMMENT)) : undefined;
}

/** Whether the element is a range (a key end other than its key). */
function isRange(buf: Uint8Array, off: Int32Array, len: Int32Array): boolean {
  const endAt = off[ELEM_ATTR.KEY_END]!;
  const keyAt = off[ELEM_ATTR.KEY]!;
  return endAt >= 0 && !bytesEqual(buf.subarray(endAt, endAt + len[ELEM_ATTR.KEY_END]!), buf.subarray(keyAt, keyAt + len[ELEM_ATTR.KEY]!));
}

/** A DataView of each buffer visited, made once per buffer (a dump's elements come in a few hundred). */
function viewsOf(): (buf: Uint8Array) => DataView {
  let last: Uint8Array | undefined;
  let view: DataView | undefined;
  return (buf) => {
    if (last !== buf) (last = buf), (view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength));
    return view!;
  };
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
