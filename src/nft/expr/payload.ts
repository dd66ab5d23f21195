import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_PAYLOAD_BASE, type PayloadBase } from '../netlink/constants.js';
import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { namesByNumber, required, requiredName, type ExprCodec } from './codec.js';

/** nft_payload: load `len` bytes at `offset` of a header into `dreg` (or, with sreg, write them). */
export interface PayloadExpr {
  type: 'payload';
  base: PayloadBase;
  offset: number;
  len: number;
  dreg?: number;
  /** Payload write (mangle): the source register and checksum fix-up. */
  sreg?: number;
  csumType?: number;
  csumOffset?: number;
  csumFlags?: number;
}

const A = EXPR_ATTR.payload;
const BASE_BY_NUMBER = namesByNumber(NFT_PAYLOAD_BASE);

export const payloadCodec: ExprCodec<PayloadExpr> = {
  type: 'payload',
  name: 'payload',
  encodeAttrs(w: WireWriter, e: PayloadExpr): void {
    if (e.dreg !== undefined) w.attrU32(A.DREG, e.dreg);
    if (e.sreg !== undefined) w.attrU32(A.SREG, e.sreg);
    w.attrU32(A.BASE, codeOf(NFT_PAYLOAD_BASE, e.base, 'payload base'));
    w.attrU32(A.OFFSET, e.offset);
    w.attrU32(A.LEN, e.len);
    if (e.csumType !== undefined) w.attrU32(A.CSUM_TYPE, e.csumType);
    if (e.csumOffset !== undefined) w.attrU32(A.CSUM_OFFSET, e.csumOffset);
    if (e.csumFlags !== undefined) w.attrU32(A.FLAGS, e.csumFlags);
  },
  decode(x: WireExpr): PayloadExpr {
    const base = requiredName(BASE_BY_NUMBER, getU32(x.attrs, A.BASE), 'payload', 'base');
    const e: PayloadExpr = {
      type: 'payload',
      base,
      offset: required(getU32(x.attrs, A.OFFSET), 'payload', 'offset'),
      len: required(getU32(x.attrs, A.LEN), 'payload', 'len'),
    };
    const dreg = getU32(x.attrs, A.DREG);
    if (dreg !== undefined) e.dreg = dreg;
    const sreg = getU32(x.attrs, A.SREG);
    if (sreg !== undefined) {
      e.sreg = sreg;
      const ct = getU32(x.attrs, A.CSUM_TYPE);
      if (ct !== undefined) e.csumType = ct;
      const co = getU32(x.attrs, A.CSUM_OFFSET);
      if (co !== undefined) e.csumOffset = co;
      const cf = getU32(x.attrs, A.FLAGS);
      if (cf !== undefined) e.csumFlags = cf;
    }
    return e;
  },
};
