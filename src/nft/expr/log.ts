import { EXPR_ATTR } from '../netlink/attrs.js';
import { getStr, getU16, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import type { ExprCodec } from './codec.js';

/** nft_log: log the packet to the kernel log (level) or to an nflog group. */
export interface LogExpr {
  type: 'log';
  prefix?: string;
  level?: number;
  group?: number;
  snaplen?: number;
  qthreshold?: number;
  flags?: number;
}

const A = EXPR_ATTR.log;

export const logCodec: ExprCodec<LogExpr> = {
  type: 'log',
  name: 'log',
  encodeAttrs(w: WireWriter, e: LogExpr): void {
    if (e.prefix !== undefined) w.attrStr(A.PREFIX, e.prefix);
    // libnftnl keeps group and qthreshold as u16, snaplen, level and flags as u32.
    if (e.group !== undefined) w.attrU16(A.GROUP, e.group);
    if (e.snaplen !== undefined) w.attrU32(A.SNAPLEN, e.snaplen);
    if (e.qthreshold !== undefined) w.attrU16(A.QTHRESHOLD, e.qthreshold);
    if (e.level !== undefined) w.attrU32(A.LEVEL, e.level);
    if (e.flags !== undefined) w.attrU32(A.FLAGS, e.flags);
  },
  decode(x: WireExpr): LogExpr {
    const e: LogExpr = { type: 'log' };
    const prefix = getStr(x.attrs, A.PREFIX);
    if (prefix !== undefined) e.prefix = prefix;
    const group = getU16(x.attrs, A.GROUP);
    if (group !== undefined) e.group = group;
    const snaplen = getU32(x.attrs, A.SNAPLEN);
    if (snaplen !== undefined) e.snaplen = snaplen;
    const qthreshold = getU16(x.attrs, A.QTHRESHOLD);
    if (qthreshold !== undefined) e.qthreshold = qthreshold;
    const level = getU32(x.attrs, A.LEVEL);
    if (level !== undefined) e.level = level;
    const flags = getU32(x.attrs, A.FLAGS);
    if (flags !== undefined) e.flags = flags;
    return e;
  },
};
