// NFTA_RULE_COMPAT for a rule holding iptables-nft's xtables expressions (match/target, kept raw by
// expr/unknown.ts). The kernel's x_tables checks many extensions against the rule's layer 4
// protocol (multiport, REJECT --reject-with tcp-reset...), which nft_compat reads from this
// attribute, not from the rule's expressions; the kernel never dumps it. iptables-nft sends it
// with the `-p` it matched as `meta l4proto` (`!` as a not-equal compare), so a dumped rule gets it
// back from that match.

import type { Expr } from '../../expr/index.js';
import { isXtExpr } from '../../expr/unknown.js';

/** NFT_RULE_COMPAT_F_INV (1 << 1; bit 0 is unused): the protocol match is inverted (`! -p tcp`). */
export const NFT_RULE_COMPAT_F_INV = 2;

export interface XtCompat {
  proto: number;
  flags: number;
}

const isXt = (e: Expr): boolean => e.type === 'unknown' && isXtExpr(e);

/** The compat protocol of a rule with xtables expressions; undefined when it has none or matches no protocol. */
export function xtCompat(exprs: readonly Expr[]): XtCompat | undefined {
  if (!exprs.some(isXt)) return undefined;
  for (let i = 0; i + 1 < exprs.length; i++) {
    const load = exprs[i]!;
    const cmp = exprs[i + 1]!;
    if (load.type !== 'meta' || load.key !== 'l4proto' || load.dreg === undefined) continue;
    if (cmp.type !== 'cmp' || cmp.sreg !== load.dreg || cmp.data.length !== 1) continue;
    if (cmp.op === 'eq') return { proto: cmp.data[0]!, flags: 0 };
    if (cmp.op === 'neq') return { proto: cmp.data[0]!, flags: NFT_RULE_COMPAT_F_INV };
  }
  return undefined;
}
