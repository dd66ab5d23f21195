// Rules as nft text: the builder's output renders to the statements nft would print, and the shapes
// nft itself compiles (short prefix loads, two-compare ranges, flag masks) read back the same way.

import { describe, expect, it } from 'vitest';
import { ct, fibType, ip, ip6, meta, numgen, renderRule, renderRuleExprs, renderRuleset, rule, tcp, th, types } from '../../src/index.js';
import type { Expr } from '../../src/index.js';

const text = (family: 'ip' | 'ip6' | 'inet', exprs: Expr[]): string => renderRuleExprs(exprs, { family });

describe('rendering builder output', () => {
  const cases: [string, 'ip' | 'ip6' | 'inet', Expr[]][] = [
    ['ip daddr 198.18.0.1 tcp dport 80 counter packets 0 bytes 0 accept', 'ip', rule('ip').match(ip.daddr, '198.18.0.1').match(tcp.dport, 80).counter().accept().build()],
    ['ip saddr 198.18.0.0/15 drop', 'ip', rule('ip').match(ip.saddr, '198.18.0.0/15').drop().build()],
    ['ip saddr != 198.18.0.0/24 return', 'ip', rule('ip').match(ip.saddr, '198.18.0.0/24', 'neq').return().build()],
    ['tcp dport 1000-2000 accept', 'inet', rule('inet').match(tcp.dport, '1000-2000').accept().build()],
    ['ip6 daddr . meta l4proto . th dport vmap @service-ips', 'ip6', rule('ip6').vmap([ip6.daddr, meta.l4proto, th.dport], 'service-ips').build()],
    ['ct state established,related accept', 'inet', rule('inet').match(ct.state, 'established,related').accept().build()],
    ['meta mark set meta mark | 0x00004000', 'ip', rule('ip').setMark({ or: 0x4000 }).build()],
    ['meta mark & 0x00004000 == 0x00000000 return', 'ip', rule('ip').matchMasked(meta.mark, 0x4000, 0).return().build()],
    ['fib daddr type local jump nodeports', 'ip', rule('ip').match(fibType('daddr'), 'local').jump('nodeports').build()],
    ['masquerade fully-random', 'ip', rule('ip').masquerade({ flags: ['fully-random'] }).build()],
    ['reject with tcp reset', 'ip', rule('ip').reject({ tcpReset: true }).build()],
    ['ip saddr 198.18.0.9 reject with icmp host-unreachable', 'inet', rule('inet').match(ip.saddr, '198.18.0.9').reject({ icmp: 'host-unreachable' }).build()],
    ['meta l4proto tcp dnat to 198.18.1.1:8080', 'ip', rule('ip').match(meta.l4proto, 'tcp').dnat({ family: 'ip', addr: '198.18.1.1', port: 8080 }).build()],
    ['meta l4proto tcp dnat to [2001:db8::1]:80', 'ip6', rule('ip6').match(meta.l4proto, 'tcp').dnat({ family: 'ip6', addr: '2001:db8::1', port: 80 }).build()],
    ['meta l4proto tcp dnat ip to 198.18.1.1:80', 'inet', rule('inet').match(meta.l4proto, 'tcp').dnat({ family: 'ip', addr: '198.18.1.1', port: 80 }).build()],
    [
      'meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 198.18.1.1 . 80, 1 : 198.18.1.2 . 80 }',
      'ip',
      rule('ip').match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', 2), map: { elements: [{ key: [0], value: ['198.18.1.1', 80] }, { key: [1], value: ['198.18.1.2', 80] }] } }).build(),
    ],
    ['update @affinity { ip saddr timeout 3h }', 'ip', rule('ip').dynset('update', 'affinity', ip.saddr, { timeoutMs: 10_800_000 }).build()],
    ['tcp dport { 22, 80, 443 } accept', 'ip', rule('ip').match(tcp.dport, [443, 22, 80]).accept().build()],
    ['limit rate 10/second burst 5 packets log prefix "x: " level info', 'ip', rule('ip').limit(10, 'second').log({ prefix: 'x: ', level: 6 }).build()],
  ];
  it.each(cases)('%s', (expected, family, exprs) => {
    expect(text(family, exprs)).toBe(expected);
  });
});

describe('rendering what nft compiles', () => {
  it('a 3-byte load is a /24 prefix, gte+lte a range, nfproto dependencies are implied', () => {
    const exprs: Expr[] = [
      { type: 'meta', key: 'nfproto', dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.from([2]) },
      { type: 'payload', base: 'network', offset: 12, len: 3, dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.from([198, 18, 7]) },
      { type: 'meta', key: 'l4proto', dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.from([17]) },
      { type: 'payload', base: 'transport', offset: 2, len: 2, dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'gte', data: types.inet_service.parse(5000) },
      { type: 'cmp', sreg: 1, op: 'lte', data: types.inet_service.parse(6000) },
      { type: 'immediate', dreg: 0, verdict: { kind: 'drop' } },
    ];
    expect(text('inet', exprs)).toBe('ip saddr 198.18.7.0/24 udp dport 5000-6000 drop');
  });
  it('an expression without nft text is listed raw, not loadable, and never throws', () => {
    const exprs: Expr[] = [
      { type: 'unknown', name: 'tproxy', attrs: [[1, Uint8Array.of(2, 0, 0, 0)]] },
      { type: 'immediate', dreg: 0, verdict: { kind: 'accept' } },
    ];
    expect(renderRule(exprs, { family: 'ip' })).toEqual({ text: '[ tproxy 1=0x02000000 ] accept', loadable: false });
    // A register nothing nftlink knows loaded: the whole rule raw.
    const reads: Expr[] = [{ type: 'unknown', name: 'tunnel', attrs: [[2, Uint8Array.of(1, 0, 0, 0)]] }, { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(1) }];
    expect(renderRule(reads, { family: 'ip' })).toEqual({ text: '[ tunnel 2=0x01000000 ] [ cmp sreg=1 op=eq data=0x01 ]', loadable: false });
  });
  it('xt matches print as nft prints them, and make the rule a comment in a listing', () => {
    const name = new TextEncoder().encode('multiport\0');
    const exprs: Expr[] = [{ type: 'unknown', name: 'match', attrs: [[1, name], [2, Uint8Array.of(1, 0, 0, 0)]] }, { type: 'counter' }];
    expect(renderRule(exprs, { family: 'ip' })).toEqual({ text: 'xt match "multiport" counter packets 0 bytes 0', loadable: false });
    const listed = renderRuleset({
      generation: 1,
      tables: [{ family: 'ip', name: 'filter' }],
      chains: [{ family: 'ip', table: 'filter', name: 'INPUT' }],
      sets: [],
      rules: [{ family: 'ip', table: 'filter', chain: 'INPUT', exprs }],
    });
    expect(listed).toContain('\t\t# xt match "multiport" counter packets 0 bytes 0\n');
  });
  it('host firewall fields nft compiles: icmp type, tcp flags under a mask, dscp bits, quota and ct count', () => {
    const exprs: Expr[] = [
      { type: 'meta', key: 'l4proto', dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(6) },
      { type: 'payload', base: 'transport', offset: 13, len: 1, dreg: 1 },
      { type: 'bitwise', sreg: 1, dreg: 1, len: 1, mask: Uint8Array.of(0x12), xor: Uint8Array.of(0) },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(0x02) },
      { type: 'payload', base: 'network', offset: 1, len: 1, dreg: 1 },
      { type: 'bitwise', sreg: 1, dreg: 1, len: 1, mask: Uint8Array.of(0xfc), xor: Uint8Array.of(0) },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(46 << 2) },
      { type: 'unknown', name: 'connlimit', attrs: [[1, Uint8Array.of(10, 0, 0, 0)], [2, Uint8Array.of(1, 0, 0, 0)]] },
      { type: 'unknown', name: 'quota', attrs: [[1, Uint8Array.of(0, 0, 0x90, 1, 0, 0, 0, 0)], [2, Uint8Array.of(0, 0, 0, 0)]] },
      { type: 'immediate', dreg: 0, verdict: { kind: 'accept' } },
    ];
    expect(renderRule(exprs, { family: 'ip' })).toEqual({ text: 'tcp flags syn / syn,ack ip dscp ef ct count over 10 quota 25 mbytes accept', loadable: true });
    const icmpv6: Expr[] = [
      { type: 'meta', key: 'nfproto', dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(10) },
      { type: 'meta', key: 'l4proto', dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(58) },
      { type: 'payload', base: 'transport', offset: 0, len: 1, dreg: 1 },
      { type: 'cmp', sreg: 1, op: 'eq', data: Uint8Array.of(135) },
    ];
    expect(text('inet', icmpv6)).toBe('icmpv6 type nd-neighbor-solicit');
  });
});
