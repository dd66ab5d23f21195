// Named stateful objects, flowtables and ingress chains against the kernel and nft: written over
// netlink they list as the same text loaded by nft -f does; dumped they render as written; a
// ruleset nft loaded lists through nftlink as text nft loads back to the same ruleset.

import { afterAll, describe, expect, it } from 'vitest';
import { listRuleset } from '../../src/cli/list.js';
import { Nftables, renderRuleset } from '../../src/index.js';
import { RulesetModel } from '../../src/nft/model.js';
import { FIXTURE_DEVICES, namedObjectsRuleset } from '../fixtures/named-objects.js';
import { namespacesForFile } from '../helpers/netns.js';

const made = namespacesForFile(afterAll);
/** A fresh namespace with the fixture's devices: veth pairs inside it (this kernel has no dummy driver). */
function ns(): ReturnType<typeof made> {
  const n = made();
  for (const d of FIXTURE_DEVICES) n.exec('ip', ['link', 'add', d, 'type', 'veth', 'peer', 'name', `${d}p`]);
  return n;
}

describe('named objects, flowtables and ingress chains', () => {
  it('netlink and nft -f give the same nft list ruleset', async () => {
    const viaNetlink = ns();
    const viaNft = ns();
    const tx = namedObjectsRuleset();
    console.log(tx.render());
    viaNft.nftApply(tx.render());
    const nft = Nftables.open({ netns: viaNetlink.name });
    try {
      await nft.commit(tx);
    } finally {
      nft.close();
    }
    const a = viaNetlink.nftList();
    console.log(a);
    expect(a).toBe(viaNft.nftList());
  });

  it('dump, then render, equals what was written', async () => {
    const target = ns();
    const tx = namedObjectsRuleset();
    const nft = Nftables.open({ netns: target.name });
    try {
      await nft.commit(tx);
      const dumped = await nft.dump();
      expect(renderRuleset(dumped)).toBe(renderRuleset(new RulesetModel().apply(tx.operations).ruleset()));
    } finally {
      nft.close();
    }
  });
});
