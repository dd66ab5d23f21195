import { EXPR_ATTR } from '../netlink/attrs.js';
import { getStr } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { required, type ExprCodec } from './codec.js';

/** nft_flow_offload: `flow add @ft` puts the packet's connection into flowtable `flowtable`. */
export interface FlowOffloadExpr {
  type: 'flow';
  flowtable: string;
}

const A = EXPR_ATTR.flow_offload;

export const flowOffloadCodec: ExprCodec<FlowOffloadExpr> = {
  type: 'flow',
  name: 'flow_offload',
  encodeAttrs(w: WireWriter, e: FlowOffloadExpr): void {
    if (typeof e.flowtable !== 'string' || e.flowtable.length === 0) throw new RangeError('flow add needs the flowtable\'s name');
    w.attrStr(A.TABLE_NAME, e.flowtable);
  },
  decode(x: WireExpr): FlowOffloadExpr {
    return { type: 'flow', flowtable: required(getStr(x.attrs, A.TABLE_NAME), 'flow_offload', 'table name') };
  },
};
