// Attribute values of a decoded object (host order, as libnftnl's getters return them; the bytes
// are read one by one: a DataView per attribute was a tenth of decoding a 10k-service table).

import { cString } from '../../c-string.js';
import type { WireAttrs } from './wire-objects.js';

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
  return b ? cString(b) : undefined;
}
export function getBytes(attrs: WireAttrs, id: number): Uint8Array | undefined {
  return attrs[id];
}
/** A u64 as a number: handles, positions and timeouts stay far below 2^53 (read without a BigInt). */
export function getU64Number(attrs: WireAttrs, id: number): number | undefined {
  const b = attrs[id];
  if (!b) return undefined;
  if (b.length < 8) throw new Error(`nftlink: attribute ${id} is ${b.length} bytes, expected 8`);
  const low = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  const high = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
  return high * 2 ** 32 + low;
}
