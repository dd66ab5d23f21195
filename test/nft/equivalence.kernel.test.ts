// The same transaction applied over netlink in one fresh namespace and as rendered text with
// `nft -f` in another: `nft list ruleset` of the two must be identical.

import { afterAll, describe, expect, it } from 'vitest';
import { Nftables } from '../../src/index.js';
import { namespacesForFile } from '../helpers/netns.js';
import { FIXTURES } from '../fixtures/index.js';

const ns = namespacesForFile(afterAll);


describe.each(FIXTURES)('%s', (_name, build) => {
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
