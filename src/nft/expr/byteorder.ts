import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_BYTEORDER } from '../netlink/constants.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

/** nft_byteorder: convert `len` bytes of `size`-byte words between host and network order. */
export interface ByteorderExpr {
  type: 'byteorder';
  sreg: number;
  dreg: number;
  op: 'ntoh' | 'hton';
  len: number;
  size: number;
}

const A = EXPR_ATTR.byteorder;

export const byteorderCodec: ExprCodec<ByteorderExpr> = {
  type: 'byteorder',
  name: 'byteorder',
  encodeAttrs(w: WireWriter, e: ByteorderExpr): void {
    w.attrU32(A.SREG, e.sreg);
    w.attrU32(A.DREG, e.dreg);
    w.attrU32(A.OP, codeOf(NFT_BYTEORDER, e.op, 'byteorder op'));
    w.attrU32(A.LEN, e.len);
    w.attrU32(A.SIZE, e.size);
  },
  decode(x: WireExpr): ByteorderExpr {
    return {
      type: 'byteorder',
      sreg: required(getU32(x.attrs, A.SREG), 'byteorder', 'sreg'),
      dreg: required(getU32(x.attrs, A.DREG), 'byteorder', 'dreg'),
      op: getU32(x.attrs, A.OP) === NFT_BYTEORDER.hton ? 'hton' : 'ntoh',
      len: required(getU32(x.attrs, A.LEN), 'byteorder', 'len'),
      size: required(getU32(x.attrs, A.SIZE), 'byteorder', 'size'),
    };
  },
};
