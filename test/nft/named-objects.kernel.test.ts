// Named stateful objects, flowtables and ingress chains against the kernel and nft: written over
// netlink they list as the same text loaded by nft -f does; dumped they render as written; a
// ruleset nft loaded lists through nftlink as text nft loads back to the same ruleset.

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuleset } from '../../src/cli/list.js';
import { NftCommitError, Nftables, renderRuleset, rule, Transaction, udp } from '../../src/index.js';
import { RulesetModel } from '../../src/nft/model.js';
import { FIXTURE_DEVICES, flowtableRuleset, namedObjectsRuleset, objectMapsRuleset } from '../fixtures/named-objects.js';
import { namespacesForFile } from '../helpers/netns.js';

const made = namespacesForFile(afterAll);
/** A fresh namespace with the fixture's devices: veth pairs inside it (this kernel has no dummy driver). */
function ns(): ReturnType<typeof made> {
  const n = made();
  for (const d of FIXTURE_DEVICES) n.exec('ip', ['link', 'add', d, 'type', 'veth', 'peer', 'name', `${d}p`]);
  return n;
}

describe.each([
  ['named objects and ingress chains', namedObjectsRuleset],
  ['maps of named objects', objectMapsRuleset],
] as const)('%s', (_name, fixture) => {
  it('netlink and nft -f give the same nft list ruleset', async () => {
    const viaNetlink = ns();
    const viaNft = ns();
    const tx = fixture();
    viaNft.nftApply(tx.render());
    const nft = Nftables.open({ netns: viaNetlink.name });
    try {
      await nft.commit(tx);
    } finally {
      nft.close();
    }
    const a = viaNetlink.nftList();
    expect(a).toBe(viaNft.nftList());
  });

  it('dump, then render, equals what was written', async () => {
    const target = ns();
    const tx = fixture();
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

describe('nftlink list of named objects and ingress chains nft loaded', () => {
  it('fed back to nft -f, gives the same nft list ruleset', async () => {
    const original = ns();
    original.nftApply(readFileSync(new URL('../fixtures/named-objects.nft', import.meta.url), 'utf8'));
    const listed = await listRuleset({ netns: original.name });
    expect(listed).toMatch(/quota cap \{\n\t\tover 26214400 bytes used 1024 bytes/);
    expect(listed).toMatch(/hook ingress devices = \{ d0, d1 \} priority -100/);
    const copy = ns();
    copy.nftApply(listed);
    expect(copy.nftList()).toBe(original.nftList());
  });
});

describe('named objects at work', () => {
  it('a named counter and quota count the packets of every rule that names them', async () => {
    const target = ns();
    const nft = Nftables.open({ netns: target.name });
    try {
      const tx = new Transaction();
      tx.add({ table: { family: 'ip', name: 'count' } });
      tx.add({ object: { family: 'ip', table: 'count', name: 'pings', type: 'counter' } });
      tx.add({ object: { family: 'ip', table: 'count', name: 'allowance', type: 'quota', bytes: 1_000_000 } });
      tx.add({ chain: { family: 'ip', table: 'count', name: 'out', base: { type: 'filter', hook: 'output', priority: 0 } } });
      tx.add({ rule: rule('ip').match(udp.dport, 9999).object('counter', 'pings').object('quota', 'allowance').rule('count', 'out') });
      tx.add({ rule: rule('ip').match(udp.dport, 9999).object('counter', 'pings').rule('count', 'out') });
      await nft.commit(tx);
      // Three datagrams of 100 bytes to loopback: 128-byte IPv4 packets through the output hook.
      const send = "const s = require('dgram').createSocket('udp4'); let n = 0; const go = () => s.send(Buffer.alloc(100), 9999, '127.0.0.1', () => (++n < 3 ? go() : s.close())); go();";
      target.exec(process.execPath, ['-e', send]);
      const objects = (await nft.dump({ table: 'count' })).objects ?? [];
      const pings = objects.find((o) => o.name === 'pings');
      const allowance = objects.find((o) => o.name === 'allowance');
      // Two rules name the counter: each packet counts twice; the quota, named once, once.
      expect(pings?.type === 'counter' && [pings.packets, pings.bytes]).toEqual([6n, 768n]);
      expect(allowance?.type === 'quota' && allowance.used).toBe(384n);
    } finally {
      nft.close();
    }
  });

  it('delete and destroy remove objects by type and name; one a rule uses is refused and nothing changes', async () => {
    const target = ns();
    const nft = Nftables.open({ netns: target.name });
    try {
      await nft.commit(namedObjectsRuleset());
      const before = target.nftList();
      const inUse = new Transaction()
        .delete({ object: { family: 'inet', table: 'objs', name: 'tftp4', type: 'ct helper' } })
        .delete({ object: { family: 'inet', table: 'objs', name: 'slow', type: 'limit' } });
      const refused = await nft.commit(inUse).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(NftCommitError);
      expect(String(refused)).toMatch(/delete limit inet objs slow.*EBUSY/s);
      expect(target.nftList()).toBe(before);

      await nft.commit(
        new Transaction()
          .delete({ object: { family: 'inet', table: 'objs', name: 'tftp4', type: 'ct helper' } })
          .destroy({ object: { family: 'inet', table: 'objs', name: 'never-made', type: 'quota' } })
          .delete({ chain: { family: 'netdev', table: 'wire', name: 'one' } }),
      );
      const after = await nft.dump();
      expect(after.objects?.map((o) => o.name)).not.toContain('tftp4');
      expect(after.objects?.length).toBe(namedObjectsRuleset().operations.filter((op) => op.kind === 'object').length - 1);
      expect(target.nftList()).not.toMatch(/tftp4|chain one/);
      const missing = await nft.commit(new Transaction().delete({ object: { family: 'inet', table: 'objs', name: 'tftp4', type: 'ct helper' } })).catch((e: unknown) => e);
      expect(String(missing)).toMatch(/ENOENT/);
    } finally {
      nft.close();
    }
  });
});

describe('flowtables', () => {
  /** Whether this kernel has flowtables (CONFIG_NF_FLOW_TABLE), asked of nft itself. */
  function kernelHasFlowtables(): boolean {
    const probe = ns();
    try {
      probe.nftApply('table inet probe {\n\tflowtable f {\n\t\thook ingress priority 0\n\t\tdevices = { d0 }\n\t}\n}\n');
      return true;
    } catch (err) {
      expect(String(err)).toMatch(/No such file or directory/);
      return false;
    }
  }

  it('netlink and nft -f give the same nft list ruleset, dump renders as written (or both are refused alike)', async () => {
    const viaNetlink = ns();
    const tx = flowtableRuleset();
    expect(tx.render()).toContain('add flowtable inet flows fast { hook ingress priority 0; devices = { d0, d1 }; }');
    expect(tx.render()).toContain('add rule inet flows fw flow add @fast');
    const nft = Nftables.open({ netns: viaNetlink.name });
    try {
      if (!kernelHasFlowtables()) {
        // A kernel without flowtables refuses the flowtable, as it refuses nft: nothing is written.
        const refused = await nft.commit(tx).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(NftCommitError);
        expect(String(refused)).toMatch(/add flowtable inet flows fast.*ENOENT/s);
        expect(viaNetlink.nftList()).toBe('');
        return;
      }
      const viaNft = ns();
      viaNft.nftApply(tx.render());
      await nft.commit(tx);
      expect(viaNetlink.nftList()).toBe(viaNft.nftList());
      const dumped = await nft.dump();
      expect(renderRuleset(dumped)).toBe(renderRuleset(new RulesetModel().apply(tx.operations).ruleset()));
      const copy = ns();
      copy.nftApply(await listRuleset({ netns: viaNft.name }));
      expect(copy.nftList()).toBe(viaNft.nftList());
    } finally {
      nft.close();
    }
  });
});
