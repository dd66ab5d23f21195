import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_NG } from '../netlink/constants.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

/** nft_numgen: a number in [offset, offset + modulus), random or incrementing, into `dreg` (host order, 4 bytes). */
export interface NumgenExpr {
  type: 'numgen';
  mode: 'random' | 'inc';
  modulus: number;
  offset?: number;
  dreg: number;
}

const A = EXPR_ATTR.numgen;

export const numgenCodec: ExprCodec<NumgenExpr> = {
  type: 'numgen',
  name: 'numgen',
  encodeAttrs(w: WireWriter, e: NumgenExpr): void {
    w.attrU32(A.DREG, e.dreg);
    w.attrU32(A.MODULUS, e.modulus);
    w.attrU32(A.TYPE, codeOf(NFT_NG, e.mode, 'numgen mode'));
    if (e.offset) w.attrU32(A.OFFSET, e.offset);
  },
  decode(x: WireExpr): NumgenExpr {
    const e: NumgenExpr = {
      type: 'numgen',
      mode: getU32(x.attrs, A.TYPE) === NFT_NG.inc ? 'inc' : 'random',
      modulus: required(getU32(x.attrs, A.MODULUS), 'numgen', 'modulus'),
      dreg: required(getU32(x.attrs, A.DREG), 'numgen', 'dreg'),
    };
    const offset = getU32(x.attrs, A.OFFSET);
    if (offset) e.offset = offset;
    return e;
  },
};
