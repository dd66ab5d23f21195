// The compact format's writer (wire-format.ts): one buffer per transaction. It streams: counts are
// reserved and patched, so encoding 200,000 elements allocates one growing buffer and nothing per
// element.

import { WIRE_MAGIC, WIRE_VERSION, type WireKind } from '../wire-format.js';

const textEncoder = new TextEncoder();
const exprNames = new Map<string, Uint8Array>();

/** Lists inside lists: an operation's expressions hold attribute lists and nested expressions (a dynset's). */
const MAX_LIST_DEPTH = 16;

/**
 * Copies `s` into `buf` at `at` while it is ASCII, one byte per character, and returns how many
 * characters it copied (fewer than s.length: a character that is not ASCII stopped it). Names are
 * almost always ASCII: this spares them the TextEncoder, and the element writers share it with
 * attrStr, so that V8 has compiled it by the time a dispatch map's chain names come.
 */
export function writeAscii(s: string, buf: Uint8Array, at: number): number {
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    buf[at + i++] = c;
  }
  return i;
}

export class WireWriter {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  /**
   * The lists being filled, innermost at depth - 1: where each one's count sits, how many items
   * it has so far, and whether the count is a u32. Typed arrays of a fixed depth, not arrays
   * pushed and popped: every attribute list of every operation opens and closes one, and V8
   * compiles a typed-array store into a few instructions where push() and pop() carry their
   * growth and element-kind paths into every function that inlines them (Node 20).
   */
  private readonly countAt = new Int32Array(MAX_LIST_DEPTH);
  private readonly counts = new Int32Array(MAX_LIST_DEPTH);
  private readonly countWide = new Uint8Array(MAX_LIST_DEPTH);
  private depth = 0;

  constructor(initialSize = 4096) {
    this.buf = new Uint8Array(initialSize);
    this.view = new DataView(this.buf.buffer);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    this.resize(size);
  }

  /**
   * Room for `n` more bytes in one step: a large element list of known size (100k elements: 3.6 MB)
   * grows the buffer once instead of doubling it through 6 MB of copies. Never less than doubling,
   * so that many small lists in a row (a cold start's) still cost amortised O(1) per byte.
   */
  expect(n: number): void {
    if (this.pos + n > this.buf.length) this.resize(Math.max(this.pos + n + 4096, this.buf.length * 2));
  }

  /**
   * Goes on in a copy of the buffer, leaving the bytes written so far untouched in the old one
   * (which a streamed commit's pool thread may still be reading: RequestEncoder.dropSink).
   */
  moveToCopy(): void {
    this.resize(this.buf.length);
  }

  private resize(size: number): void {
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A point to roll back to when an operation fails to encode half way. */
  mark(): number {
    if (this.depth !== 0) throw new Error('nftlink: internal error: mark inside an open list');
    return this.pos;
  }
  reset(mark: number): void {
    this.pos = mark;
    this.depth = 0;
  }
  get length(): number {
    return this.pos;
  }
  /** Header flags and generation, patched at commit time. */
  patchHeader(flags: number, genid: number): void {
    this.view.setUint16(6, flags, true);
    this.view.setUint32(8, genid >>> 0, true);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  u16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  header(flags: number, genid: number): number {
    this.u32(WIRE_MAGIC);
    this.u16(WIRE_VERSION);
    this.u16(flags);
    this.u32(genid);
    const at = this.pos;
    this.u32(0);
    return at;
  }

  patchU32(at: number, v: number): void {
    this.view.setUint32(at, v >>> 0, true);
  }

  op(msgType: number, kind: WireKind, nlFlags: number, family: number): void {
    this.ensure(8);
    this.buf[this.pos] = msgType;
    this.buf[this.pos + 1] = kind;
    this.view.setUint16(this.pos + 2, nlFlags, true);
    this.buf[this.pos + 4] = family;
    this.buf[this.pos + 5] = 0;
    this.buf[this.pos + 6] = 0;
    this.buf[this.pos + 7] = 0;
    this.pos += 8;
  }

  /** Opens a counted list (attrs, exprs: u16; elements: u32). Items are counted by `item()`. */
  openList(wide = false): void {
    const d = this.depth;
    if (d === MAX_LIST_DEPTH) throw new Error(`nftlink: internal error: lists nested deeper than ${MAX_LIST_DEPTH}`);
    this.countAt[d] = this.pos;
    this.counts[d] = 0;
    this.countWide[d] = wide ? 1 : 0;
    this.depth = d + 1;
    if (wide) this.u32(0);
    else this.u16(0);
  }
  item(): void {
    this.counts[this.depth - 1]!++;
  }
  closeList(): void {
    const d = --this.depth;
    const at = this.countAt[d]!;
    const n = this.counts[d]!;
    const wide = this.countWide[d] === 1;
    if (wide) this.view.setUint32(at, n, true);
    else {
      if (n > 0xffff) throw new RangeError(`nftlink: more than 65535 attributes or expressions in one object`);
      this.view.setUint16(at, n, true);
    }
  }

  private attrHead(id: number, len: number): void {
    this.item();
    this.ensure(6 + len);
    this.view.setUint16(this.pos, id, true);
    this.view.setUint32(this.pos + 2, len, true);
    this.pos += 6;
  }
  attrU8(id: number, v: number): void {
    this.attrHead(id, 1);
    this.buf[this.pos++] = v;
  }
  attrU16(id: number, v: number): void {
    this.attrHead(id, 2);
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }
  attrU32(id: number, v: number): void {
    this.attrHead(id, 4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }
  attrS32(id: number, v: number): void {
    this.attrHead(id, 4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
  }
  attrU64(id: number, v: bigint): void {
    this.attrHead(id, 8);
    this.view.setBigUint64(this.pos, v, true);
    this.pos += 8;
  }
  attrStr(id: number, s: string): void {
    // Names repeat in every message (table, chain, set): written straight into the buffer, ASCII
    // byte by byte (no view, no result object per attribute: 40k of each on a 10k-service cold
    // start), anything else through the TextEncoder. UTF-8 takes at most 3 bytes per UTF-16 unit.
    const at = this.pos;
    this.ensure(6 + s.length * 3 + 1);
    const buf = this.buf;
    let written = writeAscii(s, buf, at + 6);
    if (written < s.length) written = textEncoder.encodeInto(s, buf.subarray(at + 6)).written;
    this.attrHead(id, written + 1);
    this.pos += written;
    this.buf[this.pos++] = 0;
  }
  /**
   * Raw access for the encoder's hot loops: makes room for `n` bytes and returns where they start;
   * the caller fills them through `bytes`/`dataView` and then moves the position with seek().
   */
  reserve(n: number): number {
    this.ensure(n);
    return this.pos;
  }
  /** Moves the write position to `pos` (at most the buffer's end), after bytes written through `bytes`. */
  seek(pos: number): void {
    if (pos > this.buf.length) throw new Error('nftlink: internal error: wire writer position past its buffer');
    this.pos = pos;
  }
  get dataView(): DataView {
    return this.view;
  }

  /** An attribute whose `len` bytes the caller writes in place at the returned offset of `bytes`. */
  attrInPlace(id: number, len: number): number {
    this.attrHead(id, len);
    const at = this.pos;
    this.pos += len;
    return at;
  }
  /** The buffer attrInPlace offsets point into (valid until the next write). */
  get bytes(): Uint8Array {
    return this.buf;
  }
  attrBytes(id: number, bytes: Uint8Array): void {
    this.attrHead(id, bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }
  /** Short bytes, appended by a byte loop: TypedArray.set costs more than a few dozen stores. */
  private copyIn(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    const buf = this.buf;
    let at = this.pos;
    for (let i = 0; i < bytes.length; i++) buf[at++] = bytes[i]!;
    this.pos = at;
  }
  /** One list item whose bytes were encoded before (an expression's, see encodeExpr). */
  encodedItem(bytes: Uint8Array): void {
    this.item();
    this.copyIn(bytes);
  }
  exprName(name: string): void {
    this.item();
    // A handful of names ("payload", "cmp", ...), written for every expression: encoded once.
    let bytes = exprNames.get(name);
    if (!bytes) exprNames.set(name, (bytes = textEncoder.encode(name)));
    this.u8(bytes.length);
    this.copyIn(bytes);
  }

  finish(): Uint8Array {
    if (this.depth !== 0) throw new Error('nftlink: internal error: unclosed list in wire writer');
    return this.buf.subarray(0, this.pos);
  }
}
