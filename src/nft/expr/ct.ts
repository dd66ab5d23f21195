import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_CT, type CtKey } from '../netlink/constants.js';
import { getU32, getU8 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { namesByNumber, requiredName, type ExprCodec } from './codec.js';

/** nft_ct: load a conntrack field into `dreg` (or set it from `sreg`); `dir` 0 original, 1 reply. */
export interface CtExpr {
  type: 'ct';
  key: CtKey;
  dreg?: number;
  sreg?: number;
  dir?: 0 | 1;
}

const A = EXPR_ATTR.ct;
const KEY_BY_NUMBER = namesByNumber(NFT_CT);

export const ctCodec: ExprCodec<CtExpr> = {
  type: 'ct',
  name: 'ct',
  encodeAttrs(w: WireWriter, e: CtExpr): void {
    w.attrU32(A.KEY, codeOf(NFT_CT, e.key, 'ct key'));
    if (e.dreg !== undefined) w.attrU32(A.DREG, e.dreg);
    if (e.sreg !== undefined) w.attrU32(A.SREG, e.sreg);
    if (e.dir !== undefined) w.attrU8(A.DIR, e.dir);
  },
  decode(x: WireExpr): CtExpr {
    const key = requiredName(KEY_BY_NUMBER, getU32(x.attrs, A.KEY), 'ct', 'key');
    const e: CtExpr = { type: 'ct', key };
    const dreg = getU32(x.attrs, A.DREG);
    if (dreg !== undefined) e.dreg = dreg;
    const sreg = getU32(x.attrs, A.SREG);
    if (sreg !== undefined) e.sreg = sreg;
    const dir = getU8(x.attrs, A.DIR);
    if (dir !== undefined) e.dir = dir ? 1 : 0;
    return e;
  },
};
