import { EXPR_ATTR } from '../netlink/attrs.js';
import { NFT_REJECT } from '../netlink/constants.js';
import { getU32, getU8 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { checkOneOf } from '../validate.js';
import { required, type ExprCodec } from './codec.js';

const REJECT_TYPES = ['icmp', 'tcp-reset', 'icmpx'] as const;

/** nft_reject: answer with an ICMP(v6) error, an ICMPX code (inet: picks the family), or a TCP reset. */
export interface RejectExpr {
  type: 'reject';
  reject: (typeof REJECT_TYPES)[number];
  /** ICMP/ICMPv6/ICMPX code (0 for tcp-reset). */
  code: number;
}

const A = EXPR_ATTR.reject;

export const rejectCodec: ExprCodec<RejectExpr> = {
  type: 'reject',
  name: 'reject',
  encodeAttrs(w: WireWriter, e: RejectExpr): void {
    checkOneOf(e.reject, REJECT_TYPES, 'reject type');
    w.attrU32(A.TYPE, e.reject === 'icmp' ? NFT_REJECT.icmp_unreach : e.reject === 'tcp-reset' ? NFT_REJECT.tcp_rst : NFT_REJECT.icmpx_unreach);
    // libnftnl stores the code as a u8 (NFTA_REJECT_ICMP_CODE is NLA_U8).
    w.attrU8(A.CODE, e.code);
  },
  decode(x: WireExpr): RejectExpr {
    const t = required(getU32(x.attrs, A.TYPE), 'reject', 'type');
    return {
      type: 'reject',
      reject: t === NFT_REJECT.tcp_rst ? 'tcp-reset' : t === NFT_REJECT.icmpx_unreach ? 'icmpx' : 'icmp',
      code: getU8(x.attrs, A.CODE) ?? 0,
    };
  },
};
