// An element operation with no elements queues nothing (empty-elements.unit.test.ts): committed, the
// set keeps its elements and the generation does not move. And why it must: the same operation
// sent as a message (the encoder, without the transaction's check) flushes the set, or is EINVAL.

import { afterAll, describe, expect, it } from 'vitest';
import { Nftables, Transaction, types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';
import { loadNative } from '../../src/native/binding.js';
import { encodeRequest } from '../../src/nft/netlink/encode.js';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);
const { ipv4_addr, ipv6_addr, inet_service } = types;

const addrs: NftSet = { family: 'ip', table: 't', name: 'addrs', key: [ipv4_addr] };
const ranges: NftSet = { family: 'ip6', table: 't', name: 'ranges', key: [ipv6_addr], flags: ['interval'] };
const ports: NftSet = { family: 'ip', table: 't', name: 'ports', key: [ipv4_addr], data: [inet_service] };

const HELD: [NftSet, SetElement[]][] = [
  [addrs, [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }]],
  [ranges, [{ key: ['2001:db8::'], keyEnd: ['2001:db8::ff'] }, { key: ['2001:db8::1:1'] }]],
  [ports, [{ key: ['198.18.0.1'], value: [80] }]],
];

/** A namespace whose sets hold HELD's elements, and a connection to it. */
async function loaded(): Promise<{ nft: Nftables; netns: string }> {
  const netns = ns().name;
  const nft = Nftables.open({ netns });
  const tx = new Transaction();
  for (const [set, elements] of HELD) tx.add({ table: { family: set.family, name: set.table } }).add({ set }).add({ set, elements });
  await nft.commit(tx);
  return { nft, netns };
}

/** A set's elements in a stable order (a hash set dumps in its own). */
async function elementsOf(nft: Nftables, set: NftSet): Promise<SetElement[]> {
  return (await nft.dumpSetElements(set)).elements.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

async function held(nft: Nftables): Promise<SetElement[][]> {
  return Promise.all(HELD.map(([set]) => elementsOf(nft, set)));
}

describe('no elements', () => {
  it.each(['delete', 'destroy', 'add', 'create'] as const)('%s of none: the sets keep their elements, the generation stays', async (verb) => {
    const { nft } = await loaded();
    try {
      const generation = await nft.generation();
      const tx = new Transaction();
      for (const [set] of HELD) tx[verb]({ set, elements: [] });
      await nft.commit(tx);
      expect(await held(nft)).toEqual(HELD.map(([, elements]) => elements));
      expect(await nft.generation()).toBe(generation);
    } finally {
      nft.close();
    }
  });

  it('next to other operations: only those are applied', async () => {
    const { nft } = await loaded();
    try {
      const tx = new Transaction()
        .delete({ set: addrs, elements: [] })
        .add({ set: addrs, elements: [{ key: ['198.18.0.3'] }] })
        .destroy({ set: ports, elements: (function* (): Generator<SetElement> {})() })
        .delete({ set: addrs, elements: [{ key: ['198.18.0.1'] }] });
      expect(tx.size).toBe(2);
      await nft.commit(tx);
      expect(await elementsOf(nft, addrs)).toEqual([{ key: ['198.18.0.2'] }, { key: ['198.18.0.3'] }]);
      expect(await elementsOf(nft, ports)).toEqual([{ key: ['198.18.0.1'], value: [80] }]);
    } finally {
      nft.close();
    }
  });

  it('sent as a message anyway, a delete of none flushes the set and an add of none is EINVAL (why none is queued)', async () => {
    const { nft, netns } = await loaded();
    const native = loadNative();
    const h = native.open(netns);
    try {
      const added = await native.commit(h, encodeRequest([{ verb: 'add', kind: 'element', set: addrs, elements: [] }]).buffer);
      expect(added.errors.map((e) => e.errno)).toEqual([22]);
      const deleted = await native.commit(h, encodeRequest([{ verb: 'delete', kind: 'element', set: addrs, elements: [] }]).buffer);
      expect(deleted.errors).toEqual([]);
      expect((await nft.dumpSetElements(addrs)).elements).toEqual([]);
    } finally {
      native.close(h);
      nft.close();
    }
  });
});
