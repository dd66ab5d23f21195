// A dumped expression nftlink cannot model is kept raw, never an error: an unknown name, or a known
// one with a key, base or mode this version has no name for (a newer kernel's). Its attributes are
// kept as they came, so it re-encodes to the same bytes.

import { describe, expect, it } from 'vitest';
import { decodeExpr } from '../../src/nft/expr/index.js';
import { WireAttrs } from '../../src/nft/netlink/decode/wire-attrs.js';
import type { WireExpr } from '../../src/nft/netlink/decode/wire-objects.js';

const u32 = (n: number): Uint8Array => Uint8Array.of(n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24);
const wire = (name: string, attrs: Record<number, Uint8Array>): WireExpr => ({ name, attrs: WireAttrs.of(Object.entries(attrs).map(([id, b]) => [Number(id), b])), exprs: [] });

describe('decoding what nftlink does not model', () => {
  it.each([
    ['a meta key past the known ones', 'meta', { 1: u32(99), 2: u32(1) }],
    ['a ct key past the known ones', 'ct', { 1: u32(1), 2: u32(77) }],
    ['a payload base past the known ones', 'payload', { 1: u32(1), 2: u32(9), 3: u32(0), 4: u32(4) }],
    ['a bitwise shift', 'bitwise', { 1: u32(1), 2: u32(1), 3: u32(4), 6: u32(1), 7: u32(8) }],
    ['an expression without a name nftlink knows', 'tproxy', { 1: u32(2), 2: u32(1) }],
  ] as const)('%s: kept raw with its attributes', (_what, name, attrs) => {
    const e = decodeExpr(wire(name, attrs));
    expect(e.type).toBe('unknown');
    if (e.type !== 'unknown') return;
    expect(e.name).toBe(name);
    // Object.entries gives integer keys in increasing order, as the raw attributes are kept.
    expect(e.attrs).toEqual(Object.entries(attrs).map(([id, b]) => [Number(id), b]));
  });

  it('rt, socket and hash decode to their own types', () => {
    expect(decodeExpr(wire('rt', { 1: u32(1), 2: u32(1) }))).toEqual({ type: 'rt', key: 'nexthop4', dreg: 1 });
    expect(decodeExpr(wire('socket', { 1: u32(3), 2: u32(1), 3: u32(2) }))).toEqual({ type: 'socket', key: 'cgroupv2', dreg: 1, level: 2 });
    expect(decodeExpr(wire('hash', { 1: u32(2), 2: u32(1), 3: u32(4), 4: u32(2), 5: u32(0xdeadbeef), 6: u32(100), 7: u32(0) }))).toEqual({
      type: 'hash',
      mode: 'jhash',
      sreg: 2,
      len: 4,
      modulus: 2,
      seed: 0xdeadbeef,
      offset: 100,
      dreg: 1,
    });
    expect(decodeExpr(wire('hash', { 2: u32(1), 4: u32(2), 7: u32(1) }))).toEqual({ type: 'hash', mode: 'symhash', modulus: 2, dreg: 1 });
  });
});
