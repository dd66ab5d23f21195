import { EXPR_ATTR } from '../netlink/attrs.js';
import { getU64, type WireExpr, type WireWriter } from '../netlink/wire.js';
import type { ExprCodec } from './codec.js';

/** nft_counter: packets and bytes that reached it. */
export interface CounterExpr {
  type: 'counter';
  packets?: bigint;
  bytes?: bigint;
}

const A = EXPR_ATTR.counter;

export const counterCodec: ExprCodec<CounterExpr> = {
  type: 'counter',
  name: 'counter',
  encodeAttrs(w: WireWriter, e: CounterExpr): void {
    if (e.packets !== undefined) w.attrU64(A.PACKETS, e.packets);
    if (e.bytes !== undefined) w.attrU64(A.BYTES, e.bytes);
  },
  decode(x: WireExpr): CounterExpr {
    return { type: 'counter', packets: getU64(x.attrs, A.PACKETS) ?? 0n, bytes: getU64(x.attrs, A.BYTES) ?? 0n };
  },
};
