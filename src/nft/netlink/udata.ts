// libnftnl's userdata TLVs (u8 type, u8 length, value): where nft keeps what the kernel does not
// interpret: comments, and for sets the byte order and `typeof` that `nft list` needs to print
// values the way they were written. We write exactly what nft 1.0.6 writes for the same set.

import { cString } from '../c-string.js';

const enc = new TextEncoder();

export class UdataBuilder {
  private readonly parts: number[] = [];
  u32(type: number, v: number): this {
    this.parts.push(type, 4, v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
    return this;
  }
  /** A NUL-terminated string, as nftnl_udata_put_strz writes it. */
  strz(type: number, s: string): this {
    const b = enc.encode(s);
    if (b.length + 1 > 255) throw new RangeError(`userdata string of ${b.length} bytes is too long`);
    this.parts.push(type, b.length + 1, ...b, 0);
    return this;
  }
  raw(type: number, b: Uint8Array): this {
    if (b.length > 255) throw new RangeError(`userdata value of ${b.length} bytes is too long`);
    this.parts.push(type, b.length, ...b);
    return this;
  }
  nest(type: number, inner: UdataBuilder): this {
    return this.raw(type, inner.bytes());
  }
  get empty(): boolean {
    return this.parts.length === 0;
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

/** Visits each TLV of a list in order; a malformed tail is ignored, as libnftnl does. */
export function forEachUdata(b: Uint8Array | undefined, visit: (type: number, value: Uint8Array) => void): void {
  if (!b) return;
  let i = 0;
  while (i + 2 <= b.length) {
    const type = b[i]!;
    const len = b[i + 1]!;
    if (i + 2 + len > b.length) break;
    visit(type, b.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
}

/** Parses a TLV list (a type given twice: the last one). */
export function parseUdata(b: Uint8Array | undefined): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  forEachUdata(b, (type, value) => out.set(type, value));
  return out;
}

export function udataString(v: Uint8Array | undefined): string | undefined {
  return v ? cString(v) : undefined;
}

export function udataU32(v: Uint8Array | undefined): number | undefined {
  if (!v || v.length < 4) return undefined;
  return (v[0]! | (v[1]! << 8) | (v[2]! << 16) | (v[3]! << 24)) >>> 0;
}

/** A comment-only userdata blob (tables, chains, rules, elements all keep their comment at type 0). */
export function commentUdata(comment: string | undefined): Uint8Array | undefined {
  return comment === undefined ? undefined : new UdataBuilder().strz(0, comment).bytes();
}
