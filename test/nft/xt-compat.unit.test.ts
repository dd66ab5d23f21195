// The compat protocol nftlink sends with a rule holding iptables-nft's xt expressions: taken from
// the rule's `meta l4proto` compare as iptables-nft's `-p` (the kernel never dumps it).
import { describe, expect, it } from 'vitest';
import type { Expr } from '../../src/nft/expr/index.js';
import { NFT_RULE_COMPAT_F_INV, xtCompat } from '../../src/nft/netlink/encode/xt-compat.js';

const l4proto = (op: 'eq' | 'neq', proto: number): Expr[] => [
  { type: 'meta', key: 'l4proto', dreg: 1 },
  { type: 'cmp', sreg: 1, op, data: Uint8Array.of(proto) },
];
const multiport: Expr = { type: 'unknown', name: 'match', attrs: [[1, new TextEncoder().encode('multiport\0')]] };
const accept: Expr = { type: 'immediate', dreg: 0, verdict: { kind: 'accept' } };

describe('xtCompat', () => {
  it('is the protocol of -p, inverted for ! -p', () => {
    expect(xtCompat([...l4proto('eq', 6), multiport, accept])).toEqual({ proto: 6, flags: 0 });
    expect(xtCompat([...l4proto('neq', 17), multiport])).toEqual({ proto: 17, flags: NFT_RULE_COMPAT_F_INV });
    expect(NFT_RULE_COMPAT_F_INV).toBe(2);
  });

  it('is absent without an xt expression, and without a protocol match', () => {
    expect(xtCompat([...l4proto('eq', 6), accept])).toBeUndefined();
    expect(xtCompat([multiport, accept])).toBeUndefined();
    // A compare on another register is not the protocol's.
    expect(xtCompat([{ type: 'meta', key: 'l4proto', dreg: 1 }, { type: 'cmp', sreg: 2, op: 'eq', data: Uint8Array.of(6) }, multiport])).toBeUndefined();
  });
});
