import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_RANGE } from '../netlink/constants.js';
import { getCopy, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

/** nft_range: `sreg` within [from, to] (eq) or outside it (neq). */
export interface RangeExpr {
  type: 'range';
  sreg: number;
  op: 'eq' | 'neq';
  from: Uint8Array;
  to: Uint8Array;
}

const A = EXPR_ATTR.range;

export const rangeCodec: ExprCodec<RangeExpr> = {
  type: 'range',
  name: 'range',
  encodeAttrs(w: WireWriter, e: RangeExpr): void {
    w.attrU32(A.SREG, e.sreg);
    w.attrU32(A.OP, codeOf(NFT_RANGE, e.op, 'range op'));
    w.attrBytes(A.FROM_DATA, e.from);
    w.attrBytes(A.TO_DATA, e.to);
  },
  decode(x: WireExpr): RangeExpr {
    return {
      type: 'range',
      sreg: required(getU32(x.attrs, A.SREG), 'range', 'sreg'),
      op: getU32(x.attrs, A.OP) === NFT_RANGE.neq ? 'neq' : 'eq',
      from: required(getCopy(x.attrs, A.FROM_DATA), 'range', 'from'),
      to: required(getCopy(x.attrs, A.TO_DATA), 'range', 'to'),
    };
  },
};
