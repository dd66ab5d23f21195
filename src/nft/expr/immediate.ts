import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_REG } from '../netlink/constants.js';
import { getCopy, getStr, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { verdictCode, verdictFromCode, type Verdict } from '../types/verdict.js';
import { required, type ExprCodec } from './codec.js';

/** nft_immediate: a constant into a data register, or a verdict into the verdict register (dreg 0). */
export type ImmediateExpr =
  | { type: 'immediate'; dreg: number; data: Uint8Array; verdict?: undefined }
  | { type: 'immediate'; dreg: 0; verdict: Verdict; data?: undefined };

const A = EXPR_ATTR.immediate;

export const immediateCodec: ExprCodec<ImmediateExpr> = {
  type: 'immediate',
  name: 'immediate',
  encodeAttrs(w: WireWriter, e: ImmediateExpr): void {
    w.attrU32(A.DREG, e.dreg);
    if (e.verdict) {
      w.attrU32(A.VERDICT, verdictCode(e.verdict));
      if (e.verdict.kind === 'jump' || e.verdict.kind === 'goto') w.attrStr(A.CHAIN, e.verdict.chain);
    } else {
      w.attrBytes(A.DATA, e.data);
    }
  },
  decode(x: WireExpr): ImmediateExpr {
    const dreg = required(getU32(x.attrs, A.DREG), 'immediate', 'dreg');
    const code = getU32(x.attrs, A.VERDICT);
    if (dreg === NFT_REG.VERDICT && code !== undefined) {
      return { type: 'immediate', dreg: 0, verdict: verdictFromCode(code, getStr(x.attrs, A.CHAIN)) };
    }
    return { type: 'immediate', dreg, data: required(getCopy(x.attrs, A.DATA), 'immediate', 'data') };
  },
};
