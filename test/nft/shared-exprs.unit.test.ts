// The builder's shared expressions: equal expressions come back as one frozen object, and
// expressions that differ in anything the kernel or rule equality sees never do. No kernel needed.

import { describe, expect, it } from 'vitest';
import type { Expr } from '../../src/index.js';
import { shared } from '../../src/nft/builder/shared-exprs.js';

const pairsThatDiffer: [string, Expr, Expr][] = [
  ['numgen offset 0 / none', { type: 'numgen', mode: 'random', modulus: 3, offset: 0, dreg: 1 }, { type: 'numgen', mode: 'random', modulus: 3, dreg: 1 }],
  ['numgen modulus', { type: 'numgen', mode: 'random', modulus: 3, dreg: 1 }, { type: 'numgen', mode: 'random', modulus: 4, dreg: 1 }],
  ['numgen mode', { type: 'numgen', mode: 'random', modulus: 3, dreg: 1 }, { type: 'numgen', mode: 'inc', modulus: 3, dreg: 1 }],
  ['cmp data length', { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(0) }, { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(0, 0) }],
  ['cmp op', { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(6) }, { type: 'cmp', sreg: 1, op: 'neq', data: Uint8Array.of(6) }],
  ['cmp sreg', { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(6) }, { type: 'cmp', sreg: 9, op: 'eq', data: Uint8Array.of(6) }],
  ['lookup invert', { type: 'lookup', set: 's', sreg: 1 }, { type: 'lookup', set: 's', sreg: 1, invert: true }],
  ['lookup map / set', { type: 'lookup', set: 's', sreg: 1, dreg: 0 }, { type: 'lookup', set: 's', sreg: 1 }],
  ['lookup name', { type: 'lookup', set: 's', sreg: 1 }, { type: 'lookup', set: 's ', sreg: 1 }],
  ['payload base', { type: 'payload', base: 'network', offset: 16, len: 4, dreg: 1 }, { type: 'payload', base: 'transport', offset: 16, len: 4, dreg: 1 }],
  ['payload len', { type: 'payload', base: 'network', offset: 16, len: 4, dreg: 1 }, { type: 'payload', base: 'network', offset: 16, len: 2, dreg: 1 }],
  ['meta key', { type: 'meta', key: 'l4proto', dreg: 1 }, { type: 'meta', key: 'nfproto', dreg: 1 }],
  ['nat family', { type: 'nat', nat: 'dnat', family: 'ip', regAddrMin: 1, regProtoMin: 2 }, { type: 'nat', nat: 'dnat', family: 'ip6', regAddrMin: 1, regProtoMin: 2 }],
  ['nat kind', { type: 'nat', nat: 'dnat', family: 'ip', regAddrMin: 1, regProtoMin: 2 }, { type: 'nat', nat: 'snat', family: 'ip', regAddrMin: 1, regProtoMin: 2 }],
];

describe('shared expressions', () => {
  it('gives back one frozen object for equal expressions', () => {
    const a = shared({ type: 'numgen', mode: 'random', modulus: 7, offset: 70, dreg: 1 });
    const b = shared({ type: 'numgen', mode: 'random', modulus: 7, offset: 70, dreg: 1 });
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    const c = shared({ type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(198, 18, 0, 1) });
    expect(shared({ type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(198, 18, 0, 1) })).toBe(c);
  });

  it.each(pairsThatDiffer)('keeps apart expressions that differ: %s', (_what, x, y) => {
    const sx = shared(x);
    const sy = shared(y);
    expect(sy).not.toBe(sx);
    expect(sx).toEqual(x);
    expect(sy).toEqual(y);
  });

  it('leaves alone what belongs to one rule: inline sets, transaction ids, writes to a register', () => {
    const inline: Expr = { type: 'lookup', set: '__set%d', sreg: 1, inline: { family: 'ip', table: 't', name: '__set%d', key: [] } };
    expect(shared(inline)).toBe(inline);
    expect(Object.isFrozen(inline)).toBe(false);
    const store: Expr = { type: 'meta', key: 'mark', sreg: 1 };
    expect(shared(store)).toBe(store);
    expect(Object.isFrozen(store)).toBe(false);
  });
});
