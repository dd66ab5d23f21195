// The compact format between TypeScript and the addon (specified in native/README.md): one buffer
// per transaction, one per dump. Little-endian, no padding. The writer streams: counts are reserved
// and patched, so encoding 200,000 elements allocates one growing buffer and nothing per element.

export const WIRE_MAGIC = 0x4c54464e; // "NFTL"
export const WIRE_VERSION = 1;
export const WIRE_FLAG_CHECK = 0x1;
export const WIRE_FLAG_GENID = 0x2;

export const enum WireKind {
  Table = 0,
  Chain = 1,
  Rule = 2,
  Set = 3,
  Elements = 4,
}

const textEncoder = new TextEncoder();
const exprNames = new Map<string, Uint8Array>();
const textDecoder = new TextDecoder();

/**
 * Expression names come from a small vocabulary ("payload", "cmp", "lookup"...): each is decoded
 * once, then found by its length and first two bytes (and checked), instead of a TextDecoder call
 * for each of the 60k expressions of a 10k-service table.
 */
const decodedExprNames = new Map<number, string>();
function exprNameOf(b: Uint8Array): string {
  const k = b.length | (b.length > 0 ? b[0]! << 8 : 0) | (b.length > 1 ? b[1]! << 16 : 0);
  const known = decodedExprNames.get(k);
  if (known !== undefined && known.length === b.length) {
    let same = true;
    for (let i = 0; i < b.length; i++) if (known.charCodeAt(i) !== b[i]) same = false;
    if (same) return known;
  }
  const name = textDecoder.decode(b);
  if (decodedExprNames.size < 256) decodedExprNames.set(k, name);
  return name;
}

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

/**
 * One decoded attribute list: index = attribute id, value = bytes (a view into the reply buffer).
 * An array, not a Map: a dump of 100,000 elements decodes 100,000 of these.
 */
export type WireAttrs = (Uint8Array | undefined)[];

export interface WireExpr {
  name: string;
  attrs: WireAttrs;
  exprs: WireExpr[];
}

export interface WireElement {
  attrs: WireAttrs;
  exprs: WireExpr[];
}

export interface WireObject {
  msgType: number;
  kind: WireKind;
  nlFlags: number;
  family: number;
  attrs: WireAttrs;
  exprs: WireExpr[];
  /** Elements (kind 4): decoded on demand; a dump of 100,000 elements should not build them twice. */
  readonly elementCount: number;
  readElements(): WireElement[];
  /** The fast path: visits each element's attributes in place (see ElementVisitor). */
  visitElements(visit: ElementVisitor): void;
}

/**
 * Called once per element with the byte offset and length of each attribute id (offset -1: absent)
 * inside `buf`. The arrays are reused between calls. Elements with nested expressions come with
 * them decoded.
 */
export type ElementVisitor = (buf: Uint8Array, offsets: Int32Array, lengths: Int32Array, exprs: WireExpr[]) => void;

export interface WireMessage {
  flags: number;
  genid: number;
  objects: WireObject[];
}

/** Shared by every object without expressions (most elements): one allocation fewer per element. */
const NO_EXPRS: WireExpr[] = Object.freeze([]) as unknown as WireExpr[];

export class WireReader {
  pos = 0;
  private readonly view: DataView;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  private need(n: number, what: string): void {
    if (this.pos + n > this.buf.length) {
      throw new Error(`nftlink: truncated reply from the addon at byte ${this.pos} (${what})`);
    }
  }
  u8(): number {
    this.need(1, 'u8');
    return this.buf[this.pos++]!;
  }
  u16(): number {
    this.need(2, 'u16');
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4, 'u32');
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  bytes(n: number): Uint8Array {
    this.need(n, 'bytes');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  attrs(): WireAttrs {
    const n = this.u16();
    const out: WireAttrs = [];
    for (let i = 0; i < n; i++) {
      const id = this.u16();
      const len = this.u32();
      out[id] = this.bytes(len);
    }
    return out;
  }
  /** Steps over an attribute list without a view per attribute (it runs once per dumped element). */
  private skipAttrs(): void {
    const n = this.u16();
    for (let i = 0; i < n; i++) {
      this.need(6, 'attribute header');
      const len = this.view.getUint32(this.pos + 2, true);
      this.pos += 6;
      this.need(len, 'attribute');
      this.pos += len;
    }
  }

  /** Visits `count` elements from `at` (DecodedObject.visitElements). */
  visit(at: number, count: number, visit: ElementVisitor): void {
    this.pos = at;
    const offsets = new Int32Array(32);
    const lengths = new Int32Array(32);
    const buf = this.buf;
    const view = this.view;
    for (let e = 0; e < count; e++) {
      offsets.fill(-1);
      const n = this.u16();
      for (let i = 0; i < n; i++) {
        const id = view.getUint16(this.pos, true);
        const len = view.getUint32(this.pos + 2, true);
        this.pos += 6;
        if (this.pos + len > buf.length) throw new Error(`nftlink: truncated reply from the addon at byte ${this.pos} (element)`);
        if (id < 32) {
          offsets[id] = this.pos;
          lengths[id] = len;
        }
        this.pos += len;
      }
      visit(buf, offsets, lengths, this.exprs());
    }
  }

  exprs(): WireExpr[] {
    const n = this.u16();
    if (n === 0) return NO_EXPRS;
    const out: WireExpr[] = [];
    for (let i = 0; i < n; i++) {
      const name = exprNameOf(this.bytes(this.u8()));
      const attrs = this.attrs();
      out.push({ name, attrs, exprs: this.exprs() });
    }
    return out;
  }
  /** The reply's header: read it first, then its `count` objects with object(). */
  header(): Omit<WireMessage, 'objects'> & { count: number } {
    const magic = this.u32();
    if (magic !== WIRE_MAGIC) throw new Error(`nftlink: bad magic 0x${magic.toString(16)} in a reply from the addon`);
    const version = this.u16();
    if (version !== WIRE_VERSION) throw new Error(`nftlink: addon speaks wire version ${version}, expected ${WIRE_VERSION}`);
    const flags = this.u16();
    const genid = this.u32();
    return { flags, genid, count: this.u32() };
  }

  /**
   * The next object of the reply. A caller that decodes each object before reading the next lets
   * its attribute views die young: a 10k-service dump's 20k objects, all read before any was
   * decoded, survived two scavenges each and were copied twice for nothing.
   */
  object(last: boolean): WireObject {
    const msgType = this.u8();
    const kind = this.u8() as WireKind;
    const nlFlags = this.u16();
    const family = this.u8();
    this.bytes(3);
    const attrs = this.attrs();
    const exprs = this.exprs();
    let elementCount = 0;
    let elementsAt = -1;
    if (kind === WireKind.Elements) {
      elementCount = this.u32();
      elementsAt = this.pos;
      // Stepped over only to find the next object: a set dump's part is one object of up to
      // 1 MiB of elements, which visitElements then reads once (and bounds-checks as it goes).
      if (!last) {
        for (let e = 0; e < elementCount; e++) {
          this.skipAttrs();
          this.exprs();
        }
      }
    }
    return new DecodedObject(this.buf, msgType, kind, nlFlags, family, attrs, exprs, elementCount, elementsAt);
  }

  message(): WireMessage {
    const { flags, genid, count } = this.header();
    const objects: WireObject[] = [];
    for (let i = 0; i < count; i++) objects.push(this.object(i === count - 1));
    return { flags, genid, objects };
  }
}

/** A WireObject of a reply; its element methods are the class's (a dump has 20k objects at 10k services: no closures each). */
class DecodedObject implements WireObject {
  constructor(
    private readonly buf: Uint8Array,
    readonly msgType: number,
    readonly kind: WireKind,
    readonly nlFlags: number,
    readonly family: number,
    readonly attrs: WireAttrs,
    readonly exprs: WireExpr[],
    readonly elementCount: number,
    private readonly elementsAt: number,
  ) {}

  readElements(): WireElement[] {
    const r = new WireReader(this.buf);
    r.pos = this.elementsAt;
    const out: WireElement[] = [];
    for (let e = 0; e < this.elementCount; e++) out.push({ attrs: r.attrs(), exprs: r.exprs() });
    return out;
  }

  visitElements(visit: ElementVisitor): void {
    if (this.elementCount === 0) return;
    new WireReader(this.buf).visit(this.elementsAt, this.elementCount, visit);
  }
}

// Attribute value helpers for decoding (host order, as libnftnl's getters return them; the bytes
// are read one by one: a DataView per attribute was a tenth of decoding a 10k-service table).
export function getU32(attrs: WireAttrs, id: number): number | undefined {
  const b = attrs[id];
  if (!b) return undefined;
  if (b.length < 4) throw new Error(`nftlink: attribute ${id} is ${b.length} bytes, expected 4`);
  return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
}
export function getS32(attrs: WireAttrs, id: number): number | undefined {
  const v = getU32(attrs, id);
  return v === undefined ? undefined : v | 0;
}
export function getU8(attrs: WireAttrs, id: number): number | undefined {
  const b = attrs[id];
  return b ? b[0] : undefined;
}
export function getU16(attrs: WireAttrs, id: number): number | undefined {
  const b = attrs[id];
  if (!b) return undefined;
  if (b.length < 2) throw new Error(`nftlink: attribute ${id} is ${b.length} bytes, expected 2`);
  return b[0]! | (b[1]! << 8);
}
export function getU64(attrs: WireAttrs, id: number): bigint | undefined {
  const b = attrs[id];
  if (!b) return undefined;
  if (b.length < 8) throw new Error(`nftlink: attribute ${id} is ${b.length} bytes, expected 8`);
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
}
export function getStr(attrs: WireAttrs, id: number): string | undefined {
  const b = attrs[id];
  if (!b) return undefined;
  const end = b.indexOf(0);
  return textDecoder.decode(end >= 0 ? b.subarray(0, end) : b);
}
export function getBytes(attrs: WireAttrs, id: number): Uint8Array | undefined {
  return attrs[id];
}
