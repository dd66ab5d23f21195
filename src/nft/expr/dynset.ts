import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_DYNSET_F_INV, NFT_DYNSET_OP } from '../netlink/constants.js';
import { getStr, getU32, getU64 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

/**
 * nft_dynset: add (or update, or delete) the key at `sregKey` in a dynamic set from the packet path;
 * `sregData` makes it a map entry. `timeout` in milliseconds; `update` slides an existing entry's timeout.
 * Nested stateful expressions (a counter per entry) ride along.
 */
export interface DynsetExpr {
  type: 'dynset';
  op: 'add' | 'update' | 'delete';
  set: string;
  setId?: number;
  sregKey: number;
  sregData?: number;
  timeout?: bigint;
  invert?: boolean;
  exprs?: readonly { type: string }[];
}

const A = EXPR_ATTR.dynset;
const OP_BY_NUMBER: Record<number, DynsetExpr['op']> = { 0: 'add', 1: 'update', 2: 'delete' };

export const dynsetCodec: ExprCodec<DynsetExpr> = {
  type: 'dynset',
  name: 'dynset',
  encodeAttrs(w: WireWriter, e: DynsetExpr): void {
    w.attrU32(A.SREG_KEY, e.sregKey);
    if (e.sregData !== undefined) w.attrU32(A.SREG_DATA, e.sregData);
    w.attrU32(A.OP, codeOf(NFT_DYNSET_OP, e.op, 'dynset op'));
    if (e.timeout !== undefined) w.attrU64(A.TIMEOUT, e.timeout);
    w.attrStr(A.SET_NAME, e.set);
    if (e.setId !== undefined) w.attrU32(A.SET_ID, e.setId);
    if (e.invert) w.attrU32(A.FLAGS, NFT_DYNSET_F_INV);
  },
  nested: (e) => e.exprs ?? [],
  decode(x: WireExpr, decodeNested): DynsetExpr {
    const e: DynsetExpr = {
      type: 'dynset',
      op: OP_BY_NUMBER[getU32(x.attrs, A.OP) ?? 0] ?? 'add',
      set: required(getStr(x.attrs, A.SET_NAME), 'dynset', 'set'),
      sregKey: required(getU32(x.attrs, A.SREG_KEY), 'dynset', 'sreg key'),
    };
    const data = getU32(x.attrs, A.SREG_DATA);
    if (data !== undefined) e.sregData = data;
    const timeout = getU64(x.attrs, A.TIMEOUT);
    if (timeout) e.timeout = timeout;
    if ((getU32(x.attrs, A.FLAGS) ?? 0) & NFT_DYNSET_F_INV) e.invert = true;
    if (x.exprs.length) e.exprs = x.exprs.map(decodeNested);
    return e;
  },
};
