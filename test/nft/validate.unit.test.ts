// Queue-time limits counted in UTF-8 bytes, as nf_tables counts them (names up to 255 bytes plus
// the NUL, comments up to 128), at the edges and for multi-byte text; and the names TypeScript's
// types promise, checked for callers without them. No kernel needed.

import { describe, expect, it } from 'vitest';
import type { Expr } from '../../src/nft/expr/index.js';
import type { NftSet } from '../../src/nft/objects.js';
import { rule } from '../../src/nft/builder/rule-builder.js';
import { Transaction } from '../../src/nft/transaction.js';
import { ipv4_addr } from '../../src/nft/types/datatypes.js';
import { checkComment, checkName } from '../../src/nft/validate.js';
import { refusalOf } from '../helpers/refusal.js';

describe('name and comment limits', () => {
  it('takes a name of 255 bytes and refuses 256, ASCII or not', () => {
    expect(() => checkName('chain', 'x'.repeat(255))).not.toThrow();
    expect(() => checkName('chain', 'x'.repeat(256))).toThrow(/chain name "x{40}\.\.\." is 256 bytes; nf_tables allows 255/);
    // 'é' is 2 bytes: 127 of them (254 bytes) and one 'x' fit, 128 do not.
    expect(() => checkName('set', 'é'.repeat(127) + 'x')).not.toThrow();
    expect(() => checkName('set', 'é'.repeat(128))).toThrow(/is 256 bytes/);
    // '日' is 3 bytes: 85 fit (255), 86 do not; both are short in UTF-16 units.
    expect(() => checkName('table', '日'.repeat(85))).not.toThrow();
    expect(() => checkName('table', '日'.repeat(86))).toThrow(/is 258 bytes/);
  });

  it('takes a comment of 128 bytes and refuses 129', () => {
    expect(() => checkComment('rule', 'c'.repeat(128))).not.toThrow();
    expect(() => checkComment('rule', 'c'.repeat(129))).toThrow(/rule comment is 129 bytes; at most 128/);
    expect(() => checkComment('rule', 'ü'.repeat(64))).not.toThrow();
    expect(() => checkComment('rule', 'ü'.repeat(64) + 'c')).toThrow(/is 129 bytes/);
    expect(() => checkComment('rule', '😀'.repeat(32))).not.toThrow();
    expect(() => checkComment('rule', '😀'.repeat(32) + 'c')).toThrow(/is 129 bytes/);
  });
});

describe('names from callers without TypeScript', () => {
  // What a JavaScript caller (or one reading JSON) could pass: a misspelt name used to go out as 0,
  // so `hook: 'inptu'` made a prerouting chain and `policy: 'Accept'` a dropping one.
  const table = { family: 'ip', name: 't' } as const;
  const base = { type: 'filter', hook: 'input', priority: 0, policy: 'accept' };
  const chainWith = (b: Record<string, unknown>) => ({ chain: { family: 'ip', table: 't', name: 'c', base: { ...base, ...b } } }) as never;
  const set = (s: Record<string, unknown>): NftSet => ({ family: 'ip', table: 't', name: 's', key: [ipv4_addr], ...s }) as NftSet;
  const refused = (obj: unknown): string => {
    const tx = new Transaction().add({ table });
    const { message } = refusalOf(tx, obj);
    // Nothing of the refused operation was queued: the transaction is as it was.
    expect(tx.render()).toBe('add table ip t\n');
    return message;
  };

  it('refuses an unknown family, table flag, chain type, hook, priority or policy, naming it', () => {
    expect(refused({ table: { family: 'inet6', name: 'u' } })).toMatch(/family "inet6" is not one of: inet, ip, arp, netdev, bridge, ip6/);
    expect(refused({ table: { family: 'unspec', name: 'u' } })).toMatch(/family "unspec" is not one of/);
    expect(refused({ table: { family: 'constructor', name: 'u' } })).toMatch(/family "constructor"/);
    expect(refused({ table: { ...table, flags: ['dormat'] } })).toMatch(/table flag "dormat" is not one of: dormant, owner/);
    expect(refused(chainWith({ hook: 'inptu' }))).toMatch(/add chain ip t c: chain hook "inptu" is not one of: prerouting, input, forward, output, postrouting, ingress/);
    expect(refused(chainWith({ hook: 'toString' }))).toMatch(/chain hook "toString"/);
    expect(refused(chainWith({ policy: 'Accept' }))).toMatch(/chain policy "Accept" is not one of: accept, drop/);
    expect(refused(chainWith({ type: 'natt' }))).toMatch(/chain type "natt" is not one of: filter, nat, route/);
    expect(refused(chainWith({ priority: '-100' }))).toMatch(/chain base: priority must be a number, not the string "-100"/);
    expect(refused(chainWith({ priority: 2 ** 31 }))).toMatch(/chain priority 2147483648 is not an integer from -2147483648 to 2147483647/);
  });

  it('refuses set keys that are not data types, and unknown set flags or policies', () => {
    expect(refused({ set: set({ key: ['ipv4_addr'] }) })).toMatch(/set key field 0 is not a data type \("ipv4_addr"\): use the library's types/);
    expect(refused({ set: set({ key: [] }) })).toMatch(/set s needs a key type/);
    expect(refused({ set: set({ key: 'ipv4_addr' }) })).toMatch(/set: key must be an array, not the string "ipv4_addr"/);
    expect(refused({ set: set({ data: [ipv4_addr, 'inet_service'] }) })).toMatch(/set data field 1 is not a data type/);
    expect(refused({ set: set({ flags: ['intervals'] }) })).toMatch(/set flag "intervals" is not one of: constant, interval, timeout, dynamic/);
    expect(refused({ set: set({ policy: 'speed' }) })).toMatch(/set policy "speed" is not one of: performance, memory/);
  });

  it("refuses unknown names in a rule's expressions and reject codes", () => {
    const raw = (e: Record<string, unknown>) => ({ rule: { family: 'ip', table: 't', chain: 'c', exprs: [e as unknown as Expr] } });
    expect(refused(raw({ type: 'meta', key: 'l4protocol', dreg: 1 }))).toMatch(/meta key "l4protocol" is not one of: .*l4proto/);
    expect(refused(raw({ type: 'cmp', op: '==', sreg: 1, data: new Uint8Array([6]) }))).toMatch(/cmp op "==" is not one of: eq, neq/);
    expect(refused(raw({ type: 'ct', key: 'states', dreg: 1 }))).toMatch(/ct key "states"/);
    expect(refused(raw({ type: 'reject', reject: 'icmp6', code: 0 }))).toMatch(/reject type "icmp6" is not one of: icmp, tcp-reset, icmpx/);
    expect(() => rule('ip').reject({ icmp: 'port-unreachble' } as never)).toThrow(/reject with icmp "port-unreachble" is not one of: .*port-unreachable/);
    expect(() => rule('inet').reject({ icmpx: 'nope' } as never)).toThrow(/reject with icmpx "nope" is not one of/);
  });
});
