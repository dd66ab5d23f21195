// Attribute values of a decoded object (host order, as libnftnl's getters return them), read from
// the reply buffer in place: the bytes one by one (a DataView per attribute was a tenth of decoding
// a 10k-service table), and no view unless the caller wants the bytes.

import { cString } from '../../c-string.js';
import type { WireAttrs } from './wire-attrs.js';

/** Where attribute `id` starts, after checking it has at least `size` bytes; -1 when absent. */
function fixed(attrs: WireAttrs, id: number, size: number): number {
  const at = attrs.at(id);
  if (at >= 0 && attrs.length(id) < size) throw new Error(`nftlink: attribute ${id} is ${attrs.length(id)} bytes, expected ${size}`);
  return at;
}

function u32At(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

export function getU32(attrs: WireAttrs, id: number): number | undefined {
  const at = fixed(attrs, id, 4);
  return at < 0 ? undefined : u32At(attrs.buf, at);
}
export function getS32(attrs: WireAttrs, id: number): number | undefined {
  const v = getU32(attrs, id);
  return v === undefined ? undefined : v | 0;
}
export function getU8(attrs: WireAttrs, id: number): number | undefined {
  const at = attrs.at(id);
  return at < 0 || attrs.length(id) === 0 ? undefined : attrs.buf[at];
}
export function getU16(attrs: WireAttrs, id: number): number | undefined {
  const at = fixed(attrs, id, 2);
  return at < 0 ? undefined : attrs.buf[at]! | (attrs.buf[at + 1]! << 8);
}
export function getU64(attrs: WireAttrs, id: number): bigint | undefined {
  const at = fixed(attrs, id, 8);
  return at < 0 ? undefined : (BigInt(u32At(attrs.buf, at + 4)) << 32n) | BigInt(u32At(attrs.buf, at));
}
export function getStr(attrs: WireAttrs, id: number): string | undefined {
  const at = attrs.at(id);
  return at < 0 ? undefined : cString(attrs.buf, at, at + attrs.length(id));
}
/** A view of the attribute's bytes: it pins the reply buffer (getCopy for a value kept). */
export function getBytes(attrs: WireAttrs, id: number): Uint8Array | undefined {
  return attrs.view(id);
}
/** A copy of the attribute's bytes, so that a decoded object does not pin the whole reply. */
export function getCopy(attrs: WireAttrs, id: number): Uint8Array | undefined {
  return attrs.copy(id);
}
/** A u64 as a number: handles, positions and timeouts stay far below 2^53 (read without a BigInt). */
export function getU64Number(attrs: WireAttrs, id: number): number | undefined {
  const at = fixed(attrs, id, 8);
  return at < 0 ? undefined : u32At(attrs.buf, at + 4) * 2 ** 32 + u32At(attrs.buf, at);
}
