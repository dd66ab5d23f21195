import type { WireExpr } from '../netlink/decode/wire-objects.js';

/**
 * An expression nftlink does not model (xt, tproxy, ...): kept as its raw libnftnl attributes so a
 * dump still decodes and re-encodes; the renderer says plainly that it cannot print it.
 */
export interface UnknownExpr {
  type: 'unknown';
  name: string;
  attrs: readonly (readonly [number, Uint8Array])[];
  exprs?: readonly UnknownExpr[];
}

export function decodeUnknown(x: WireExpr): UnknownExpr {
  const e: UnknownExpr = { type: 'unknown', name: x.name, attrs: x.attrs.flatMap((b, id) => (b ? [[id, new Uint8Array(b)] as [number, Uint8Array]] : [])) };
  if (x.exprs.length) e.exprs = x.exprs.map(decodeUnknown);
  return e;
}
