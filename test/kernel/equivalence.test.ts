// The same transaction applied over netlink in one fresh namespace and as rendered text with
// `nft -f` in another: `nft list ruleset` of the two must be identical.

import { afterAll, describe, expect, it } from 'vitest';
import { Nftables } from '../../src/index.js';
import { coverageRuleset } from '../fixtures/coverage.js';
import { kubeProxyShape } from '../fixtures/kube-proxy-shape.js';
import { Netns } from '../helpers/netns.js';

const made: Netns[] = [];
afterAll(() => made.forEach((ns) => ns.remove()));
function ns(): Netns {
  const n = Netns.create();
  made.push(n);
  return n;
}

const fixtures = [
  ['kube-proxy shape, ip', () => kubeProxyShape('ip')],
  ['kube-proxy shape, ip6', () => kubeProxyShape('ip6')],
  ['every expression and set shape, inet', () => coverageRuleset()],
] as const;

describe.each(fixtures)('%s', (_name, build) => {
  it('netlink and nft -f give the same nft list ruleset', async () => {
    const viaNetlink = ns();
    const viaNft = ns();
    const tx = build();
    const text = tx.render();
    viaNft.nftApply(text);
    const nft = Nftables.open({ netns: viaNetlink.name });
    try {
      await nft.commit(tx);
    } finally {
      nft.close();
    }
    const a = viaNetlink.nftList();
    const b = viaNft.nftList();
    expect(a).toMatch(/dnat/);
    expect(a).toBe(b);
  });
});
