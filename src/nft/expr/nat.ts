import { EXPR_ATTR } from '../netlink/attrs.js';
import { FAMILY_BY_NUMBER, NFPROTO, NFT_NAT } from '../netlink/constants.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

/** nft_nat: snat/dnat to the address (and port) in registers; flags are NF_NAT_RANGE_*. */
export interface NatExpr {
  type: 'nat';
  nat: 'snat' | 'dnat';
  family: 'ip' | 'ip6';
  regAddrMin?: number;
  regAddrMax?: number;
  regProtoMin?: number;
  regProtoMax?: number;
  flags?: number;
}

const A = EXPR_ATTR.nat;

export const natCodec: ExprCodec<NatExpr> = {
  type: 'nat',
  name: 'nat',
  encodeAttrs(w: WireWriter, e: NatExpr): void {
    w.attrU32(A.TYPE, codeOf(NFT_NAT, e.nat, 'nat type'));
    w.attrU32(A.FAMILY, codeOf(NFPROTO, e.family, 'nat family'));
    if (e.regAddrMin !== undefined) w.attrU32(A.REG_ADDR_MIN, e.regAddrMin);
    if (e.regAddrMax !== undefined) w.attrU32(A.REG_ADDR_MAX, e.regAddrMax);
    if (e.regProtoMin !== undefined) w.attrU32(A.REG_PROTO_MIN, e.regProtoMin);
    if (e.regProtoMax !== undefined) w.attrU32(A.REG_PROTO_MAX, e.regProtoMax);
    if (e.flags) w.attrU32(A.FLAGS, e.flags);
  },
  decode(x: WireExpr): NatExpr {
    const family = FAMILY_BY_NUMBER[required(getU32(x.attrs, A.FAMILY), 'nat', 'family')];
    const e: NatExpr = {
      type: 'nat',
      nat: getU32(x.attrs, A.TYPE) === NFT_NAT.snat ? 'snat' : 'dnat',
      family: family === 'ip6' ? 'ip6' : 'ip',
    };
    const opt = (id: number): number | undefined => getU32(x.attrs, id);
    const amin = opt(A.REG_ADDR_MIN);
    if (amin !== undefined) e.regAddrMin = amin;
    const amax = opt(A.REG_ADDR_MAX);
    if (amax !== undefined) e.regAddrMax = amax;
    const pmin = opt(A.REG_PROTO_MIN);
    if (pmin !== undefined) e.regProtoMin = pmin;
    const pmax = opt(A.REG_PROTO_MAX);
    if (pmax !== undefined) e.regProtoMax = pmax;
    const flags = opt(A.FLAGS);
    if (flags) e.flags = flags;
    return e;
  },
};
