// The compact format's reader (wire-format.ts): a dump's reply, or a request read back. Objects
// come one at a time (object()); their attributes are places in the buffer (wire-attrs.ts), read
// with attr-values.ts.

import { WIRE_MAGIC, WIRE_VERSION, WireKind } from '../wire-format.js';
import { WireAttrs } from './wire-attrs.js';
import type { ElementVisitor, WireElement, WireExpr, WireMessage, WireObject } from './wire-objects.js';

const textDecoder = new TextDecoder();

/**
 * Expression names come from a small vocabulary ("payload", "cmp", "lookup"...): each is decoded
 * once, then found by its length and first two bytes (and checked), instead of a TextDecoder call
 * for each of the 60k expressions of a 10k-service table.
 */
const decodedExprNames = new Map<number, string>();
/** The name in buf[at, at + length). */
function exprNameAt(buf: Uint8Array, at: number, length: number): string {
  const k = length | (length > 0 ? buf[at]! << 8 : 0) | (length > 1 ? buf[at + 1]! << 16 : 0);
  const known = decodedExprNames.get(k);
  if (known !== undefined && known.length === length) {
    let same = true;
    for (let i = 0; i < length; i++) if (known.charCodeAt(i) !== buf[at + i]) same = false;
    if (same) return known;
  }
  const name = textDecoder.decode(buf.subarray(at, at + length));
  if (decodedExprNames.size < 256) decodedExprNames.set(k, name);
  return name;
}

/** Shared by every object without expressions (most elements): one allocation fewer per element. */
const NO_EXPRS: WireExpr[] = Object.freeze([]) as unknown as WireExpr[];
/** Shared by every attribute list without attributes. */
const NO_SPANS: readonly number[] = Object.freeze([]);

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
  /** Steps over n bytes (padding) without a view. */
  stepOver(n: number): void {
    this.need(n, 'bytes');
    this.pos += n;
  }
  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  attrs(): WireAttrs {
    const n = this.u16();
    if (n === 0) return new WireAttrs(this.buf, NO_SPANS);
    const spans: number[] = [];
    for (let i = 0; i < n; i++) {
      const id = this.u16();
      const len = this.u32();
      this.need(len, 'attribute');
      spans[2 * id] = this.pos;
      spans[2 * id + 1] = len;
      this.pos += len;
    }
    return new WireAttrs(this.buf, spans);
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
      const length = this.u8();
      this.need(length, 'expression name');
      const name = exprNameAt(this.buf, this.pos, length);
      this.pos += length;
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
    this.stepOver(3);
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
