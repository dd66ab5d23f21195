import { describe, expect, it } from 'vitest';
import { canonicalRuleset, diffRulesets } from '../../bench/reliability/canonical.js';

const table = { table: { family: 'ip', name: 'kube-proxy', handle: 1 } };
const chain = (name: string, handle: number) => ({ chain: { family: 'ip', table: 'kube-proxy', name, handle } });
const endpointsMap = (name: string, elem: [number, string][]) => ({
  map: { family: 'ip', name, table: 'kube-proxy', type: 'integer', handle: 9, map: 'ipv4_addr . inet_service', elem: elem.map(([slot, ip]) => [slot, { concat: [ip, 8080] }]) },
});
const pick = (chainName: string, map: string, mod: number, offset: number, handle: number) => ({
  rule: { family: 'ip', table: 'kube-proxy', chain: chainName, handle, expr: [{ dnat: { family: 'ip', addr: { map: { key: { numgen: { mode: 'random', mod, offset } }, data: `@${map}` } } } }] },
});
const dump = (...entries: object[]): string => JSON.stringify({ nftables: [{ metainfo: { version: '1.0.6' } }, ...entries] });

describe('canonical ruleset', () => {
  it('equates two slot assignments that reach the same endpoints, whatever the handles and the order', () => {
    const a = dump(table, chain('service-a', 2), chain('service-b', 3), endpointsMap('endpoints-0', [[0, '198.18.10.2'], [1, '198.18.11.2'], [2, '198.18.12.2']]), pick('service-a', 'endpoints-0', 2, 0, 10), pick('service-b', 'endpoints-0', 1, 2, 11));
    const b = dump(table, chain('service-b', 7), chain('service-a', 8), endpointsMap('endpoints-3', [[5, '198.18.12.2'], [6, '198.18.11.2'], [7, '198.18.10.2']]), pick('service-b', 'endpoints-3', 1, 5, 20), pick('service-a', 'endpoints-3', 2, 6, 21));
    expect(diffRulesets(canonicalRuleset(a), canonicalRuleset(b))).toEqual({ equal: true, onlyA: [], onlyB: [] });
  });

  it('tells a different endpoint, and a slot no rule reaches (a leak), apart', () => {
    const base = dump(table, chain('service-a', 2), endpointsMap('endpoints-0', [[0, '198.18.10.2']]), pick('service-a', 'endpoints-0', 1, 0, 10));
    const moved = dump(table, chain('service-a', 2), endpointsMap('endpoints-0', [[0, '198.18.13.2']]), pick('service-a', 'endpoints-0', 1, 0, 10));
    const leaked = dump(table, chain('service-a', 2), endpointsMap('endpoints-0', [[0, '198.18.10.2'], [1, '198.18.99.2']]), pick('service-a', 'endpoints-0', 1, 0, 10));
    expect(diffRulesets(canonicalRuleset(base), canonicalRuleset(moved)).equal).toBe(false);
    const d = diffRulesets(canonicalRuleset(leaked), canonicalRuleset(base));
    expect(d.equal).toBe(false);
    expect(d.onlyA).toEqual(['unreached endpoint slots ip kube-proxy endpoints-0: 1']);
  });

  it('keeps rule order within a chain, sorts set elements, and drops the elements of dynamic sets', () => {
    const rule = (handle: number, port: number) => ({ rule: { family: 'ip', table: 'kube-proxy', chain: 'c', handle, expr: [{ match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: port } }] } });
    const set = (elem: string[], flags?: string[]) => ({ set: { family: 'ip', table: 'kube-proxy', name: 's', type: 'ipv4_addr', handle: 4, ...(flags ? { flags } : {}), elem } });
    const one = canonicalRuleset(dump(table, chain('c', 2), rule(3, 80), rule(4, 443), set(['198.18.0.1', '198.18.0.2'])));
    expect(diffRulesets(one, canonicalRuleset(dump(table, chain('c', 9), rule(10, 80), rule(11, 443), set(['198.18.0.2', '198.18.0.1'])))).equal).toBe(true);
    expect(diffRulesets(one, canonicalRuleset(dump(table, chain('c', 2), rule(3, 443), rule(4, 80), set(['198.18.0.1', '198.18.0.2'])))).equal).toBe(false);
    const dynamic = (elem: string[]) => canonicalRuleset(dump(table, set(elem, ['dynamic', 'timeout'])));
    expect(diffRulesets(dynamic(['198.18.0.1']), dynamic(['198.18.0.9'])).equal).toBe(true);
  });
  it('equates two balance numberings that reach the same endpoints, and tells a missing or unreached element apart', () => {
    const svc = '198.18.200.10';
    const serviceIps = (target: string) => ({
      map: { family: 'ip', name: 'service-ips', table: 'kube-proxy', type: ['ipv4_addr', 'inet_proto', 'inet_service'], handle: 5, map: 'verdict', elem: [[{ concat: [svc, 'tcp', 80] }, { goto: { target } }]] },
    });
    const balanceMap = (name: string, elem: [number, string][]) => ({
      map: { family: 'ip', name, table: 'kube-proxy', type: ['ipv4_addr', 'inet_proto', 'inet_service', 'integer'], handle: 6, map: 'ipv4_addr . inet_service', elem: elem.map(([k, ip]) => [{ concat: [svc, 'tcp', 80, k] }, { concat: [ip, 8080] }]) },
    });
    const balanceRule = (chainName: string, map: string, mod: number) => ({
      rule: { family: 'ip', table: 'kube-proxy', chain: chainName, handle: 12, expr: [{ dnat: { family: 'ip', addr: { map: { key: { concat: [{ payload: { protocol: 'ip', field: 'daddr' } }, { meta: { key: 'l4proto' } }, { payload: { protocol: 'tcp', field: 'dport' } }, { numgen: { mode: 'random', mod, offset: 0 } }] }, data: `@${map}` } } } }] },
    });
    const shape = (bucket: number, elem: [number, string][], mod = 2) =>
      dump(table, chain(`balance-${bucket}-tcp-${mod}`, 11), balanceRule(`balance-${bucket}-tcp-${mod}`, `balance-${bucket}`, mod), balanceMap(`balance-${bucket}`, elem), serviceIps(`balance-${bucket}-tcp-${mod}`));
    const a = canonicalRuleset(shape(0, [[0, '198.18.10.2'], [1, '198.18.11.2']]));
    expect(diffRulesets(a, canonicalRuleset(shape(3, [[0, '198.18.11.2'], [1, '198.18.10.2']]))).equal).toBe(true);
    expect(diffRulesets(a, canonicalRuleset(shape(0, [[0, '198.18.10.2'], [1, '198.18.13.2']]))).equal).toBe(false);
    const leaked = diffRulesets(canonicalRuleset(shape(0, [[0, '198.18.10.2'], [1, '198.18.11.2'], [2, '198.18.12.2']])), a);
    expect(leaked.onlyA).toEqual(['unreached balance elements ip kube-proxy balance-0: 1']);
    // A chain whose rule does not pick its count from its own bucket's map is reported.
    const wrong = dump(table, chain('balance-0-tcp-2', 11), balanceRule('balance-0-tcp-2', 'balance-1', 2), balanceMap('balance-0', [[0, '198.18.10.2'], [1, '198.18.11.2']]), serviceIps('balance-0-tcp-2'));
    expect(diffRulesets(canonicalRuleset(wrong), a).onlyA).toEqual([expect.stringMatching(/^balance chain ip kube-proxy balance-0-tcp-2 does not pick 2 from balance-0/)]);
  });
});
