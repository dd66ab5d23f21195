// The `cluster-ips-check` drop rule for unallocated ClusterIPs (kube-proxy layout; slots shares
// it). kube-proxy writes `ip daddr { CIDR }` and nft loads a set of one into the kernel as the
// prefix's bytes compared, without an anonymous set: with one service CIDR per family (the usual
// case) nftlink writes those same expressions, so taking over kube-proxy's table leaves the rule
// as it is (test/proxy/dataplane/takeover.kernel.test.ts); with two, the anonymous set.

import { describe, expect, it } from 'vitest';
import { renderRuleExprs } from '../../../src/nft/index.js';
import { baseObjects } from '../../../src/proxy/layout/kube-proxy/base.js';
import { layoutConfigs } from '../../../src/config/layout-configs.js';
import { proxySettings } from '../dataplane/helpers.js';

function dropRule(serviceCIDRs: string[], family: 'ip' | 'ip6' = 'ip') {
  const [v4, v6] = layoutConfigs(proxySettings({ serviceCIDRs }));
  const base = baseObjects(family === 'ip' ? v4! : v6!);
  const rules = base.rules.filter((r) => r.chain === 'cluster-ips-check');
  expect(rules).toHaveLength(2);
  return rules[1]!;
}

describe('cluster-ips-check', () => {
  it('one service CIDR: the prefix compared as nft loads it (3 bytes of a /24), no set', () => {
    const rule = dropRule(['198.18.200.0/24', '2001:db8:200::/112']);
    expect(renderRuleExprs(rule.exprs, { family: 'ip' })).toBe('ip daddr 198.18.200.0/24 drop');
    expect(rule.exprs.map((e) => e.type)).toEqual(['payload', 'cmp', 'immediate']);
    expect(rule.exprs[0]).toMatchObject({ type: 'payload', offset: 16, len: 3 });
  });

  it('one service CIDR of IPv6: the same', () => {
    const rule = dropRule(['198.18.200.0/24', '2001:db8:200::/112'], 'ip6');
    expect(renderRuleExprs(rule.exprs, { family: 'ip6' })).toBe('ip6 daddr 2001:db8:200::/112 drop');
    expect(rule.exprs.some((e) => e.type === 'lookup')).toBe(false);
  });

  it('two service CIDRs of a family: an anonymous set', () => {
    const rule = dropRule(['198.18.200.0/24', '198.18.201.0/24']);
    expect(renderRuleExprs(rule.exprs, { family: 'ip' })).toBe('ip daddr { 198.18.200.0/24, 198.18.201.0/24 } drop');
  });
});
