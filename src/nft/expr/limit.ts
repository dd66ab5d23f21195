import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_LIMIT, NFT_LIMIT_F_INV } from '../netlink/constants.js';
import { getU32, getU64 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { required, type ExprCodec } from './codec.js';

/** nft_limit: a token bucket of `rate` per `unit` seconds (packets or bytes); `over` inverts it. */
export interface LimitExpr {
  type: 'limit';
  rate: bigint;
  /** The period in seconds: 1 second, 60 minute, 3600 hour, 86400 day, 604800 week. */
  unit: bigint;
  burst: number;
  mode: 'packets' | 'bytes';
  over?: boolean;
}

const A = EXPR_ATTR.limit;

export const limitCodec: ExprCodec<LimitExpr> = {
  type: 'limit',
  name: 'limit',
  encodeAttrs(w: WireWriter, e: LimitExpr): void {
    w.attrU64(A.RATE, e.rate);
    w.attrU64(A.UNIT, e.unit);
    w.attrU32(A.BURST, e.burst);
    w.attrU32(A.TYPE, e.mode === 'bytes' ? NFT_LIMIT.pkt_bytes : NFT_LIMIT.pkts);
    w.attrU32(A.FLAGS, e.over ? NFT_LIMIT_F_INV : 0);
  },
  decode(x: WireExpr): LimitExpr {
    const e: LimitExpr = {
      type: 'limit',
      rate: required(getU64(x.attrs, A.RATE), 'limit', 'rate'),
      unit: required(getU64(x.attrs, A.UNIT), 'limit', 'unit'),
      burst: getU32(x.attrs, A.BURST) ?? 0,
      mode: getU32(x.attrs, A.TYPE) === NFT_LIMIT.pkt_bytes ? 'bytes' : 'packets',
    };
    if ((getU32(x.attrs, A.FLAGS) ?? 0) & NFT_LIMIT_F_INV) e.over = true;
    return e;
  },
};
