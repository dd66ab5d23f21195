import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_CMP, type CmpOp } from '../netlink/constants.js';
import { getCopy, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

/** nft_cmp: compare `sreg` with constant data; the rule stops when it is false. */
export interface CmpExpr {
  type: 'cmp';
  sreg: number;
  op: CmpOp;
  data: Uint8Array;
}

const A = EXPR_ATTR.cmp;
const OP_BY_NUMBER = Object.fromEntries(Object.entries(NFT_CMP).map(([k, v]) => [v, k])) as Record<number, CmpOp>;

export const cmpCodec: ExprCodec<CmpExpr> = {
  type: 'cmp',
  name: 'cmp',
  encodeAttrs(w: WireWriter, e: CmpExpr): void {
    w.attrU32(A.SREG, e.sreg);
    w.attrU32(A.OP, codeOf(NFT_CMP, e.op, 'cmp op'));
    w.attrBytes(A.DATA, e.data);
  },
  decode(x: WireExpr): CmpExpr {
    return {
      type: 'cmp',
      sreg: required(getU32(x.attrs, A.SREG), 'cmp', 'sreg'),
      op: OP_BY_NUMBER[required(getU32(x.attrs, A.OP), 'cmp', 'op')] ?? 'eq',
      data: required(getCopy(x.attrs, A.DATA), 'cmp', 'data'),
    };
  },
};
