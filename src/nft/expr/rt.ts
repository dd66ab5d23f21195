import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { namesByNumber, required, requiredName, type ExprCodec } from './codec.js';

/** Route keys (enum nft_rt_keys): `rt classid`, `rt ip nexthop`, `rt ip6 nexthop`, `rt mtu`, `rt ipsec`. */
export const NFT_RT = { classid: 0, nexthop4: 1, nexthop6: 2, tcpmss: 3, xfrm: 4 } as const;
export type RtKey = keyof typeof NFT_RT;

/** nft_rt: a property of the packet's route (dst entry) into `dreg`. */
export interface RtExpr {
  type: 'rt';
  key: RtKey;
  dreg: number;
}

// libnftnl's NFTNL_EXPR_RT_* ids.
const A = { KEY: 1, DREG: 2 } as const;
const KEY_BY_NUMBER = namesByNumber(NFT_RT);

export const rtCodec: ExprCodec<RtExpr> = {
  type: 'rt',
  name: 'rt',
  encodeAttrs(w: WireWriter, e: RtExpr): void {
    w.attrU32(A.KEY, codeOf(NFT_RT, e.key, 'rt key'));
    w.attrU32(A.DREG, e.dreg);
  },
  decode(x: WireExpr): RtExpr {
    const key = requiredName(KEY_BY_NUMBER, getU32(x.attrs, A.KEY), 'rt', 'key');
    return { type: 'rt', key, dreg: required(getU32(x.attrs, A.DREG), 'rt', 'dreg') };
  },
};
