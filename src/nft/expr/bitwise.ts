import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_BITWISE } from '../netlink/constants.js';
import { getCopy, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { required, type ExprCodec } from './codec.js';

/** nft_bitwise (boolean form): dreg = (sreg & mask) ^ xor, over `len` bytes. */
export interface BitwiseExpr {
  type: 'bitwise';
  sreg: number;
  dreg: number;
  len: number;
  mask: Uint8Array;
  xor: Uint8Array;
}

const A = EXPR_ATTR.bitwise;

export const bitwiseCodec: ExprCodec<BitwiseExpr> = {
  type: 'bitwise',
  name: 'bitwise',
  encodeAttrs(w: WireWriter, e: BitwiseExpr): void {
    w.attrU32(A.SREG, e.sreg);
    w.attrU32(A.DREG, e.dreg);
    w.attrU32(A.OP, NFT_BITWISE.bool);
    w.attrU32(A.LEN, e.len);
    w.attrBytes(A.MASK, e.mask);
    w.attrBytes(A.XOR, e.xor);
  },
  decode(x: WireExpr): BitwiseExpr {
    const op = getU32(x.attrs, A.OP) ?? NFT_BITWISE.bool;
    if (op !== NFT_BITWISE.bool) throw new Error(`nftlink: bitwise shift expressions are not supported`);
    return {
      type: 'bitwise',
      sreg: required(getU32(x.attrs, A.SREG), 'bitwise', 'sreg'),
      dreg: required(getU32(x.attrs, A.DREG), 'bitwise', 'dreg'),
      len: required(getU32(x.attrs, A.LEN), 'bitwise', 'len'),
      mask: required(getCopy(x.attrs, A.MASK), 'bitwise', 'mask'),
      xor: required(getCopy(x.attrs, A.XOR), 'bitwise', 'xor'),
    };
  },
};
