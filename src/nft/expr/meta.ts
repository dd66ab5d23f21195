import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_META, type MetaKey } from '../netlink/constants.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { namesByNumber, requiredName, type ExprCodec } from './codec.js';

/** nft_meta: load packet metadata into `dreg`, or set it from `sreg`. */
export interface MetaExpr {
  type: 'meta';
  key: MetaKey;
  dreg?: number;
  sreg?: number;
}

const A = EXPR_ATTR.meta;
const KEY_BY_NUMBER = namesByNumber(NFT_META);

export const metaCodec: ExprCodec<MetaExpr> = {
  type: 'meta',
  name: 'meta',
  encodeAttrs(w: WireWriter, e: MetaExpr): void {
    w.attrU32(A.KEY, codeOf(NFT_META, e.key, 'meta key'));
    if (e.dreg !== undefined) w.attrU32(A.DREG, e.dreg);
    if (e.sreg !== undefined) w.attrU32(A.SREG, e.sreg);
  },
  decode(x: WireExpr): MetaExpr {
    const key = requiredName(KEY_BY_NUMBER, getU32(x.attrs, A.KEY), 'meta', 'key');
    const e: MetaExpr = { type: 'meta', key };
    const dreg = getU32(x.attrs, A.DREG);
    if (dreg !== undefined) e.dreg = dreg;
    const sreg = getU32(x.attrs, A.SREG);
    if (sreg !== undefined) e.sreg = sreg;
    return e;
  },
};
