// dump({ perChainRules }): the rules read with one request per chain give what one dump of the
// table's rules gives, in the same order; the kernel fake answers the same.

import { afterAll, expect, it } from 'vitest';
import { Nftables, rule, Transaction, ip, tcp } from '../../src/index.js';
import { FakeNftables } from '../../src/testing/index.js';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);

function ruleset(): Transaction {
  const tx = new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ table: { family: 'ip', name: 'other' } });
  for (let c = 0; c < 30; c++) {
    tx.add({ chain: { family: 'ip', table: 't', name: `c${c}` } });
    for (let r = 0; r < c % 4; r++) tx.add({ rule: rule('ip').match(ip.saddr, `198.18.${c}.${r}`).match(tcp.dport, 1000 + r).accept().rule('t', `c${c}`) });
  }
  tx.add({ chain: { family: 'ip', table: 'other', name: 'x' } }).add({ rule: rule('ip').drop().rule('other', 'x') });
  return tx;
}

it('reads the same chains and rules, in the same order, as one dump of the table; a table is required', async () => {
  const nft = Nftables.open({ netns: ns().name });
  const fake = new FakeNftables();
  try {
    for (const conn of [nft, fake]) {
      await conn.commit(ruleset());
      const whole = await conn.dump({ family: 'ip', table: 't' });
      const perChain = await conn.dump({ family: 'ip', table: 't', perChainRules: true });
      expect(whole.rules.length).toBe(43);
      expect(perChain.chains).toEqual(whole.chains);
      expect(perChain.rules).toEqual(whole.rules);
      await expect(conn.dump({ perChainRules: true })).rejects.toThrow(/perChainRules reads the chains of one table/);
    }
  } finally {
    nft.close();
  }
});
