// `typeof` declarations: a set's key (or a map's data) described by the expressions that produce it
// (`typeof numgen random mod 5 : ip daddr . tcp dport`), as nft writes them into the set's userdata.
// nft needs them where a plain `type` cannot be written at all: nft 1.0.6 refuses `type integer`
// in a map declaration, so a map keyed by a numgen slot must be declared with typeof.

import { NFT_META, type MetaKey } from '../netlink/constants.js';
import { parseUdata, UdataBuilder, udataU32 } from '../netlink/udata.js';

export type TypeofExpr =
  | { expr: 'payload'; protocol: 'ip' | 'ip6' | 'tcp' | 'udp' | 'sctp' | 'th'; field: 'saddr' | 'daddr' | 'protocol' | 'nexthdr' | 'sport' | 'dport' }
  | { expr: 'meta'; key: MetaKey }
  | { expr: 'numgen'; mode: 'random' | 'inc'; modulus: number; offset?: number };

export interface SetTypeof {
  key: readonly TypeofExpr[];
  data?: readonly TypeofExpr[];
}

// nft's enum expr_types, proto_desc_id and header field indices (include/expression.h, proto.h).
const EXPR = { verdict: 1, payload: 7, meta: 9, concat: 13, numgen: 23 } as const;
const PROTO_DESC: Record<string, number> = { udp: 6, tcp: 8, sctp: 10, th: 11, ip: 12, ip6: 13 };
const FIELD: Record<string, Record<string, number>> = {
  ip: { protocol: 9, saddr: 11, daddr: 12 },
  ip6: { nexthdr: 6, saddr: 8, daddr: 9 },
  tcp: { sport: 1, dport: 2 },
  udp: { sport: 1, dport: 2 },
  sctp: { sport: 1, dport: 2 },
  th: { sport: 1, dport: 2 },
};

function exprUdata(e: TypeofExpr): UdataBuilder {
  const u = new UdataBuilder();
  switch (e.expr) {
    case 'payload': {
      const field = FIELD[e.protocol]?.[e.field];
      if (field === undefined) throw new RangeError(`typeof ${e.protocol} ${e.field}: not a field nftlink can describe`);
      return u.u32(0, EXPR.payload).nest(1, new UdataBuilder().u32(0, PROTO_DESC[e.protocol]!).u32(1, field));
    }
    case 'meta':
      return u.u32(0, EXPR.meta).nest(1, new UdataBuilder().u32(0, NFT_META[e.key]));
    case 'numgen':
      return u.u32(0, EXPR.numgen).nest(1, new UdataBuilder().u32(0, e.mode === 'random' ? 1 : 0).u32(1, e.modulus).u32(2, e.offset ?? 0));
  }
}

/** The TLV nft writes for NFTNL_UDATA_SET_KEY_TYPEOF / _DATA_TYPEOF: one expression, or a concatenation. */
export function typeofUdata(exprs: readonly TypeofExpr[]): UdataBuilder {
  if (exprs.length === 1) return exprUdata(exprs[0]!);
  const members = new UdataBuilder();
  exprs.forEach((e, i) => members.nest(i, exprUdata(e)));
  return new UdataBuilder().u32(0, EXPR.concat).nest(1, members);
}

/** What nft writes as the data typeof of a verdict map declared with a typeof key. */
export function verdictTypeofUdata(): UdataBuilder {
  return new UdataBuilder().u32(0, EXPR.verdict).nest(1, new UdataBuilder());
}

function parseExpr(b: Uint8Array): TypeofExpr | undefined {
  const top = parseUdata(b);
  const etype = udataU32(top.get(0));
  const data = parseUdata(top.get(1));
  if (etype === EXPR.payload) {
    const desc = udataU32(data.get(0));
    const field = udataU32(data.get(1));
    const protocol = Object.entries(PROTO_DESC).find(([, v]) => v === desc)?.[0];
    const name = protocol ? Object.entries(FIELD[protocol]!).find(([, v]) => v === field)?.[0] : undefined;
    return protocol && name ? ({ expr: 'payload', protocol, field: name } as TypeofExpr) : undefined;
  }
  if (etype === EXPR.meta) {
    const key = (Object.keys(NFT_META) as MetaKey[]).find((k) => NFT_META[k] === udataU32(data.get(0)));
    return key ? { expr: 'meta', key } : undefined;
  }
  if (etype === EXPR.numgen) {
    const out: TypeofExpr = { expr: 'numgen', mode: udataU32(data.get(0)) === 1 ? 'random' : 'inc', modulus: udataU32(data.get(1)) ?? 0 };
    const offset = udataU32(data.get(2));
    if (offset) out.offset = offset;
    return out;
  }
  return undefined;
}

/** The inverse of typeofUdata; undefined for what nftlink cannot describe (the set lists as `type`). */
export function parseTypeof(b: Uint8Array | undefined): TypeofExpr[] | undefined {
  if (!b) return undefined;
  const top = parseUdata(b);
  if (udataU32(top.get(0)) !== EXPR.concat) {
    const one = parseExpr(b);
    return one ? [one] : undefined;
  }
  const members = parseUdata(top.get(1));
  const out: TypeofExpr[] = [];
  for (let i = 0; members.has(i); i++) {
    const e = parseExpr(members.get(i)!);
    if (!e) return undefined;
    out.push(e);
  }
  return out.length ? out : undefined;
}

export function typeofText(exprs: readonly TypeofExpr[]): string {
  return exprs
    .map((e) => {
      if (e.expr === 'payload') return `${e.protocol} ${e.field}`;
      if (e.expr === 'meta') return `meta ${e.key}`;
      return `numgen ${e.mode} mod ${e.modulus}${e.offset ? ` offset ${e.offset}` : ''}`;
    })
    .join(' . ');
}
