// The hot path of large element lists (dataElements and verdictElements in elements.ts): one
// element of a plain set, a data map or a verdict map written straight into the request buffer,
// with no attribute writer calls and nothing allocated. Elements these cannot write (a comment, a
// timeout, a chain name that is not ASCII) go through the encoder's general path instead.

import type { SetElement } from '../../objects.js';
import type { Datatype, Scalar } from '../../types/datatypes.js';
import { verdictCode, type Verdict } from '../../types/verdict.js';
import { writeValues } from '../../values.js';
import { ELEM_ATTR } from '../attrs.js';
import { writeAscii, type WireWriter } from './wire-writer.js';

/** Sees an element (and its index in the operation) before it is encoded; throws to refuse it. */
export type ElementInspector = (e: SetElement, index: number) => void;

/**
 * The start of an element in the hot loops: its attribute count and its KEY attribute with the
 * key's values, at `at`. Returns where the next attribute goes; throws what writeValues throws.
 */
function writeElementKey(view: DataView, buf: Uint8Array, at: number, attrs: number, types: readonly Datatype[], key: readonly Scalar[], keyLen: number): number {
  view.setUint16(at, attrs, true);
  view.setUint16(at + 2, ELEM_ATTR.KEY, true);
  view.setUint32(at + 4, keyLen, true);
  writeValues(types, key, buf, at + 8);
  return at + 8 + keyLen;
}

/** One element of a plain set or data map, written in place (see dataElements in elements.ts). */
export function dataElement(out: ElementOutput, key: readonly Datatype[], keyLen: number, data: readonly Datatype[] | undefined, dataLen: number, size: number, e: SetElement, what: string, i: number): void {
  const at = out.room(size, i);
  const buf = out.buf;
  const view = out.view;
  let part = 'key';
  try {
    let pos = writeElementKey(view, buf, at, data ? 2 : 1, key, e.key, keyLen);
    part = 'value';
    if (data) {
      const v = e.value;
      if (!Array.isArray(v)) throw new RangeError('a map element needs a value');
      view.setUint16(pos, ELEM_ATTR.DATA, true);
      view.setUint32(pos + 2, dataLen, true);
      writeValues(data, v, buf, pos + 6);
      pos += 6 + dataLen;
    }
    view.setUint16(pos, 0, true);
  } catch (err) {
    throw new RangeError(`${what} element ${i} ${part}: ${(err as Error).message}`);
  }
  out.pos = at + size;
}

/**
 * One element of a verdict map, written in place (see verdictElements in elements.ts); false, with
 * nothing written, for one that needs the general path: a comment, a timeout, no verdict, or a
 * chain name that is not ASCII.
 */
export function verdictElement(out: ElementOutput, key: readonly Datatype[], keyLen: number, e: SetElement, what: string, i: number, inspect: ElementInspector | undefined): boolean {
  const v = e.value as Verdict | undefined;
  if (e.comment !== undefined || e.timeout !== undefined || !v || Array.isArray(v)) return false;
  const jumps = v.kind === 'jump' || v.kind === 'goto';
  const chain = jumps ? v.chain : undefined;
  if (jumps && typeof chain !== 'string') throw new RangeError(`${what} element ${i} value: a ${v.kind} needs a chain name`);
  const chainLen = chain === undefined ? 0 : chain.length;
  // Attr count, KEY, VERDICT, [CHAIN, its NUL-terminated name], an empty expression list.
  const size = 2 + 6 + keyLen + 10 + (chain === undefined ? 0 : 6 + chainLen + 1) + 2;
  const at = out.room(size, i);
  const buf = out.buf;
  const view = out.view;
  let pos = at + 8 + keyLen + 10;
  if (chain !== undefined) {
    // Written first: a name that is not ASCII leaves before anything else is (UTF-8 then).
    if (writeAscii(chain, buf, pos + 6) < chainLen) return false;
    inspect?.(e, i);
    buf[pos + 6 + chainLen] = 0;
    view.setUint16(pos, ELEM_ATTR.CHAIN, true);
    view.setUint32(pos + 2, chainLen + 1, true);
    pos += 6 + chainLen + 1;
  }
  let part = 'key';
  try {
    const verdictAt = writeElementKey(view, buf, at, chain === undefined ? 2 : 3, key, e.key, keyLen);
    part = 'value';
    view.setUint16(verdictAt, ELEM_ATTR.VERDICT, true);
    view.setUint32(verdictAt + 2, 4, true);
    view.setUint32(verdictAt + 6, verdictCode(v), true);
  } catch (err) {
    throw new RangeError(`${what} element ${i} ${part}: ${(err as Error).message}`);
  }
  view.setUint16(pos, 0, true);
  out.pos = at + size;
  return true;
}

/**
 * The element writers' view of the request buffer: the bytes, a DataView and the write position
 * in plain fields, and the writer called only to grow. Why: a 10k-element list runs largely before
 * V8 has optimised its writer (the compile takes tens of ms on a busy 2-core machine), and until
 * then each writer method is a real call; this leaves one per element (room) instead of four.
 *
 * It also ends the list's operation where it is due (`cutAt`, nextElementOp in elements.ts) on the
 * same slow path, so the hot loops carry no check of their own: one in the loop made V8 stop
 * inlining the key writer into the element writer (docs/decisions.md).
 */
export class ElementOutput {
  buf: Uint8Array;
  view: DataView;
  pos: number;
  /**
   * Bytes up to which an element may be written without the slow path: the buffer's end or the
   * cut, whichever comes first. 0 at first, so that the first room() takes the slow path. V8
   * then has seen that path before it optimises the loop; one that ran first when the request
   * buffer doubled mid-list deoptimised the loop (Node 20: "insufficient type feedback") and had
   * it compiled again.
   */
  private end = 0;

  /**
   * `cut(i, cutAt)` ends the operation before element i if it is due (the writer is at or past
   * `cutAt`), and returns where the next end is due (`cutAt` itself when it was not).
   */
  constructor(
    private readonly w: WireWriter,
    private cutAt: number,
    private readonly cut: (i: number, cutAt: number) => number,
  ) {
    this.buf = w.bytes;
    this.view = w.dataView;
    this.pos = w.length;
  }

  /** Room for `n` bytes of element `i` at `pos`, which it returns; `buf` and `view` may be new after. */
  room(n: number, i: number): number {
    if (this.pos + n > this.end) this.slowRoom(n, i);
    return this.pos;
  }

  /**
   * The slow path of room(), and where an element written by the general path starts (n = 0).
   * It asks `cut` every time, due or not: so the first slow path (the first element) has made the
   * call before V8 optimises the loop. A call first made from optimised code deoptimised the loop
   * and had TurboFan compile it again (docs/decisions.md).
   */
  slowRoom(n: number, i: number): void {
    this.w.seek(this.pos);
    this.cutAt = this.cut(i, this.cutAt);
    this.takeBack();
    if (this.pos + n > this.buf.length) {
      this.w.reserve(n);
      this.buf = this.w.bytes;
      this.view = this.w.dataView;
    }
    this.end = Math.min(this.buf.length, this.cutAt);
  }

  /** Hands the position back to the writer (the loop's end, or an element it writes itself). */
  handOver(): void {
    this.w.seek(this.pos);
  }

  /** Takes the position (and a buffer that may have grown) back after the writer wrote. */
  takeBack(): void {
    this.buf = this.w.bytes;
    this.view = this.w.dataView;
    this.pos = this.w.length;
    this.end = Math.min(this.buf.length, this.cutAt);
  }
}
