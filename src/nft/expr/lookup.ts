import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_LOOKUP_F_INV } from '../netlink/constants.js';
import { getStr, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import type { NftSet } from '../objects.js';
import { required, type ExprCodec } from './codec.js';

/**
 * nft_lookup: is the key at `sreg` in the set? With `dreg`, a map lookup that loads the element's
 * data (dreg 0: the verdict register, a verdict map). Anonymous sets created in the same batch are
 * referenced by `setId` as well as their name.
 */
export interface LookupExpr {
  type: 'lookup';
  set: string;
  setId?: number;
  sreg: number;
  dreg?: number;
  invert?: boolean;
  /**
   * An anonymous set bound to this rule (`ip daddr { ... }`): the encoder creates it in the same
   * batch, just before the rule, and the decoder attaches it from the dump. Not a kernel attribute.
   */
  inline?: NftSet;
}

const A = EXPR_ATTR.lookup;

export const lookupCodec: ExprCodec<LookupExpr> = {
  type: 'lookup',
  name: 'lookup',
  encodeAttrs(w: WireWriter, e: LookupExpr): void {
    w.attrStr(A.SET, e.set);
    if (e.setId !== undefined) w.attrU32(A.SET_ID, e.setId);
    w.attrU32(A.SREG, e.sreg);
    if (e.dreg !== undefined) w.attrU32(A.DREG, e.dreg);
    if (e.invert) w.attrU32(A.FLAGS, NFT_LOOKUP_F_INV);
  },
  decode(x: WireExpr): LookupExpr {
    const e: LookupExpr = {
      type: 'lookup',
      set: required(getStr(x.attrs, A.SET), 'lookup', 'set'),
      sreg: required(getU32(x.attrs, A.SREG), 'lookup', 'sreg'),
    };
    const dreg = getU32(x.attrs, A.DREG);
    if (dreg !== undefined) e.dreg = dreg;
    const setId = getU32(x.attrs, A.SET_ID);
    if (setId !== undefined) e.setId = setId;
    if ((getU32(x.attrs, A.FLAGS) ?? 0) & NFT_LOOKUP_F_INV) e.invert = true;
    return e;
  },
};
