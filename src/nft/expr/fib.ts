import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFTA_FIB_F, NFT_FIB_RESULT } from '../netlink/constants.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

export type FibFlag = keyof typeof NFTA_FIB_F;

/** nft_fib: a routing lookup on the packet's saddr or daddr; `type` yields the route type (RTN_LOCAL 2...). */
export interface FibExpr {
  type: 'fib';
  flags: readonly FibFlag[];
  result: keyof typeof NFT_FIB_RESULT;
  dreg: number;
}

const A = EXPR_ATTR.fib;
const RESULT_BY_NUMBER = Object.fromEntries(Object.entries(NFT_FIB_RESULT).map(([k, v]) => [v, k])) as Record<
  number,
  FibExpr['result']
>;

export const fibCodec: ExprCodec<FibExpr> = {
  type: 'fib',
  name: 'fib',
  encodeAttrs(w: WireWriter, e: FibExpr): void {
    w.attrU32(A.DREG, e.dreg);
    w.attrU32(A.RESULT, codeOf(NFT_FIB_RESULT, e.result, 'fib result'));
    w.attrU32(A.FLAGS, e.flags.reduce((acc, f) => acc | codeOf(NFTA_FIB_F, f, 'fib flag'), 0));
  },
  decode(x: WireExpr): FibExpr {
    const bits = getU32(x.attrs, A.FLAGS) ?? 0;
    return {
      type: 'fib',
      flags: (Object.keys(NFTA_FIB_F) as FibFlag[]).filter((f) => bits & NFTA_FIB_F[f]),
      result: RESULT_BY_NUMBER[required(getU32(x.attrs, A.RESULT), 'fib', 'result')] ?? 'type',
      dreg: required(getU32(x.attrs, A.DREG), 'fib', 'dreg'),
    };
  },
};
