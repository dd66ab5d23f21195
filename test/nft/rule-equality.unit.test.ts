import { describe, expect, it } from 'vitest';
import { ip, meta, numgen, tcp } from '../../src/nft/builder/fields.js';
import { rule } from '../../src/nft/builder/rule-builder.js';
import type { Rule } from '../../src/nft/objects.js';
import { sameRule, sameRules } from '../../src/nft/reconcile/rule-equality.js';

const r = (build: (b: ReturnType<typeof rule>) => ReturnType<typeof rule>, comment?: string): Rule => build(rule('ip')).rule('t', 'c', comment);

describe('rule equality', () => {
  it('tells rules apart by any constant, expression or comment', () => {
    const base = r((b) => b.match(ip.daddr, '198.18.0.1').match(tcp.dport, 80).accept());
    expect(sameRule(base, r((b) => b.match(ip.daddr, '198.18.0.1').match(tcp.dport, 80).accept()))).toBe(true);
    expect(sameRule(base, r((b) => b.match(ip.daddr, '198.18.0.2').match(tcp.dport, 80).accept()))).toBe(false);
    expect(sameRule(base, r((b) => b.match(ip.daddr, '198.18.0.1').match(tcp.dport, 81).accept()))).toBe(false);
    expect(sameRule(base, r((b) => b.match(ip.daddr, '198.18.0.1').match(tcp.dport, 80).drop()))).toBe(false);
    expect(sameRule(base, r((b) => b.match(ip.daddr, '198.18.0.1').match(tcp.dport, 80).accept(), 'note'))).toBe(false);
    expect(sameRule(base, r((b) => b.match(ip.daddr, '198.18.0.1').accept()))).toBe(false);
    const jump = (chain: string): Rule => r((b) => b.jump(chain));
    expect(sameRule(jump('a'), jump('a'))).toBe(true);
    expect(sameRule(jump('a'), jump('b'))).toBe(false);
    const pick = (n: number, offset: number, map: string): Rule =>
      r((b) => b.match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', n, offset), map: { name: map } }));
    expect(sameRule(pick(3, 65536, 'endpoints-0'), pick(3, 65536, 'endpoints-0'))).toBe(true);
    expect(sameRule(pick(3, 65536, 'endpoints-0'), pick(4, 65536, 'endpoints-0'))).toBe(false);
    expect(sameRule(pick(3, 65536, 'endpoints-0'), pick(3, 131072, 'endpoints-0'))).toBe(false);
    expect(sameRule(pick(3, 65536, 'endpoints-0'), pick(3, 65536, 'endpoints-1'))).toBe(false);
    expect(sameRules([base, jump('a')], [base, jump('a')])).toBe(true);
    expect(sameRules([base, jump('a')], [jump('a'), base])).toBe(false);
    expect(sameRules([base], [base, base])).toBe(false);
  });

  it('ignores what the kernel adds or renames: counter values, inline set names and element order, register aliases, implicit NAT fields', () => {
    const counted = (packets: bigint): Rule => ({ ...r((b) => b.counter().accept()), exprs: [{ type: 'counter', packets, bytes: packets * 60n }, { type: 'immediate', dreg: 0, verdict: { kind: 'accept' } }] as Rule['exprs'] });
    expect(sameRule(counted(0n), counted(42n))).toBe(true);
    const inline = (order: number[], name: string): Rule => {
      const x = r((b) => b.match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', 2), map: { elements: order.map((i) => ({ key: [i], value: [`198.18.0.${i + 1}`, 80] })) } }));
      return { ...x, exprs: x.exprs.map((e) => (e.type === 'lookup' && e.inline ? { ...e, set: name, inline: { ...e.inline, name } } : e)) };
    };
    expect(sameRule(inline([0, 1], '__set0'), inline([1, 0], 'abcd_7'))).toBe(true);
    const other = r((b) => b.match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', 2), map: { elements: [{ key: [0], value: ['198.18.0.1', 80] }, { key: [1], value: ['198.18.0.9', 80] }] } }));
    expect(sameRule(inline([0, 1], '__set0'), other)).toBe(false);
    // NFT_REG32_04 (12) is the storage of NFT_REG_2's first word... and of nothing else.
    const loaded = (dreg: number): Rule => ({ family: 'ip', table: 't', chain: 'c', exprs: [{ type: 'meta', key: 'l4proto', dreg }, { type: 'cmp', sreg: dreg, op: 'eq', data: new Uint8Array([6]) }] });
    expect(sameRule(loaded(12), loaded(2))).toBe(true);
    expect(sameRule(loaded(13), loaded(2))).toBe(false);
    const nat = (extra: object): Rule => ({ family: 'ip', table: 't', chain: 'c', exprs: [{ type: 'nat', nat: 'dnat', family: 'ip', regAddrMin: 1, regProtoMin: 9, ...extra } as Rule['exprs'][number]] });
    expect(sameRule(nat({}), nat({ regAddrMax: 1, regProtoMax: 9, flags: 3 }))).toBe(true);
    expect(sameRule(nat({}), nat({ regAddrMax: 2 }))).toBe(false);
    // A flag that means something (fully-random, 0x10) is compared; the registers by the word they start at.
    expect(sameRule(nat({ flags: 0x10 }), nat({ flags: 0x10 | 3 }))).toBe(true);
    expect(sameRule(nat({}), nat({ flags: 0x10 }))).toBe(false);
    expect(sameRule(nat({}), nat({ regProtoMin: 10 }))).toBe(false);
  });
});
