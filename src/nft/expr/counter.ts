import { EXPR_ATTR } from '../netlink/attrs.js';
import { getU64 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
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
    // A dump always has both counts (Linux 6.18); a request read back has them only if they were
    // set (Transaction.operation), and must then read back as it was queued.
    const packets = getU64(x.attrs, A.PACKETS);
    const bytes = getU64(x.attrs, A.BYTES);
    return packets === undefined && bytes === undefined ? { type: 'counter' } : { type: 'counter', packets: packets ?? 0n, bytes: bytes ?? 0n };
  },
};
