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
  const e: UnknownExpr = { type: 'unknown', name: x.name, attrs: x.attrs.copies() };
  if (x.exprs.length) e.exprs = x.exprs.map(decodeUnknown);
  return e;
}

/** iptables-nft's xtables match or target (the kernel's nft_compat), kept raw. */
export const isXtExpr = (e: UnknownExpr): boolean => e.name === 'match' || e.name === 'target';

const XT_NAME = 1; // NFTNL_EXPR_MT_NAME, NFTNL_EXPR_TG_NAME
const textDecoder = new TextDecoder();

/** The extension an xtables match or target loads (`multiport`, `LOG`), as its NUL-terminated name attribute says. */
export function xtExtensionName(e: UnknownExpr): string | undefined {
  const b = e.attrs.find(([id]) => id === XT_NAME)?.[1];
  if (!isXtExpr(e) || !b) return undefined;
  const end = b.indexOf(0);
  return textDecoder.decode(end >= 0 ? b.subarray(0, end) : b);
}
