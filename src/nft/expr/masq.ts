import { EXPR_ATTR } from '../netlink/attrs.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import type { ExprCodec } from './codec.js';

/** nft_masq: source NAT to the outgoing interface's address; flags are NF_NAT_RANGE_* (fully-random 0x10). */
export interface MasqExpr {
  type: 'masq';
  flags?: number;
  regProtoMin?: number;
  regProtoMax?: number;
}

const A = EXPR_ATTR.masq;

export const masqCodec: ExprCodec<MasqExpr> = {
  type: 'masq',
  name: 'masq',
  encodeAttrs(w: WireWriter, e: MasqExpr): void {
    if (e.flags) w.attrU32(A.FLAGS, e.flags);
    if (e.regProtoMin !== undefined) w.attrU32(A.REG_PROTO_MIN, e.regProtoMin);
    if (e.regProtoMax !== undefined) w.attrU32(A.REG_PROTO_MAX, e.regProtoMax);
  },
  decode(x: WireExpr): MasqExpr {
    const e: MasqExpr = { type: 'masq' };
    const flags = getU32(x.attrs, A.FLAGS);
    if (flags) e.flags = flags;
    const pmin = getU32(x.attrs, A.REG_PROTO_MIN);
    if (pmin !== undefined) e.regProtoMin = pmin;
    const pmax = getU32(x.attrs, A.REG_PROTO_MAX);
    if (pmax !== undefined) e.regProtoMax = pmax;
    return e;
  },
};
