// Interval sets read back from the kernel: ranges that touch (one ends where the next begins) must
// come back as written, whether they were added in one commit or in several. In one commit the
// encoder writes no end marker between them (the next start ends the range, as nft writes it); in
// separate commits the kernel keeps both the first range's end marker and the second's start, at the
// same key, and the decoder must pair them as nft does (the end marker first). And a set too large
// for one dump message: the kernel cuts its markers into messages without regard to pairs, so a
// range's start and end can come in different parts, and are paired only once all are in.

import { afterAll, describe, expect, it } from 'vitest';
import { Nftables, Transaction, types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);
const { ipv4_addr, ipv6_addr, inet_service } = types;

type Case = { name: string; set: NftSet; elements: SetElement[] };

const v4: NftSet = { family: 'ip', table: 't', name: 'r4', key: [ipv4_addr], flags: ['interval'] };
const v6: NftSet = { family: 'ip6', table: 't', name: 'r6', key: [ipv6_addr], flags: ['interval'] };
const ports: NftSet = { family: 'ip', table: 't', name: 'p', key: [inet_service], data: [ipv4_addr], flags: ['interval'] };

const range = (from: string | number, to: string | number): SetElement => ({ key: [from], keyEnd: [to] });
const single = (at: string | number): SetElement => ({ key: [at] });

const CASES: Case[] = [
  { name: 'IPv4 ranges', set: v4, elements: [range('198.18.6.0', '198.18.6.9'), range('198.18.6.10', '198.18.6.20')] },
  { name: 'IPv4 three ranges in a row', set: v4, elements: [range('198.18.6.0', '198.18.6.9'), range('198.18.6.10', '198.18.6.20'), range('198.18.6.21', '198.18.6.99')] },
  { name: 'IPv4 a single address, then a range', set: v4, elements: [single('198.18.6.9'), range('198.18.6.10', '198.18.6.20')] },
  { name: 'IPv4 a range, then a single address', set: v4, elements: [range('198.18.6.0', '198.18.6.8'), single('198.18.6.9')] },
  { name: 'IPv4 two single addresses', set: v4, elements: [single('198.18.6.30'), single('198.18.6.31')] },
  { name: 'IPv6 ranges', set: v6, elements: [range('2001:db8::', '2001:db8::9'), range('2001:db8::a', '2001:db8::14')] },
  { name: 'IPv6 a single address, then a range', set: v6, elements: [single('2001:db8::9'), range('2001:db8::a', '2001:db8::14')] },
  { name: 'IPv6 a range, then a single address', set: v6, elements: [range('2001:db8::1:0', '2001:db8::1:8'), single('2001:db8::1:9')] },
  {
    name: 'an interval map (each range keeps its own value)',
    set: ports,
    elements: [
      { ...range(1000, 1999), value: ['198.18.0.1'] },
      { ...range(2000, 2999), value: ['198.18.0.2'] },
    ],
  },
];

/** What a dump gives back for the set, in key order. */
async function readBack(nft: Nftables, set: NftSet): Promise<readonly SetElement[]> {
  const dumped = await nft.dump({ family: set.family, table: set.table });
  const s = dumped.sets.find((x) => x.name === set.name);
  expect(s, `set ${set.name} in the dump`).toBeDefined();
  return s!.elements ?? [];
}

function withTable(set: NftSet): Transaction {
  return new Transaction().add({ table: { family: set.family, name: set.table } }).add({ set });
}

describe.each(CASES)('$name', ({ set, elements }) => {
  it('added in one commit, read back as written', async () => {
    const nft = Nftables.open({ netns: ns().name });
    try {
      await nft.commit(withTable(set).add({ set, elements }));
      expect(await readBack(nft, set)).toEqual(elements);
    } finally {
      nft.close();
    }
  });

  it.each([
    ['in order', false],
    ['last first', true],
  ])('added in one commit each, %s, read back as written', async (_order, lastFirst) => {
    const nft = Nftables.open({ netns: ns().name });
    try {
      await nft.commit(withTable(set));
      for (const e of lastFirst ? [...elements].reverse() : elements) await nft.commit(new Transaction().add({ set, elements: [e] }));
      expect(await readBack(nft, set)).toEqual(elements);
    } finally {
      nft.close();
    }
  });
});

describe('touching ranges added in separate commits', () => {
  it('are what nft lists too (the kernel holds two ranges, not one bogus one)', async () => {
    const target = ns();
    const nft = Nftables.open({ netns: target.name });
    try {
      await nft.commit(withTable(v4));
      await nft.commit(new Transaction().add({ set: v4, elements: [range('198.18.6.0', '198.18.6.9')] }));
      await nft.commit(new Transaction().add({ set: v4, elements: [range('198.18.6.10', '198.18.6.20')] }));
      const listed = target.exec('nft', ['list', 'set', 'ip', 't', 'r4']);
      expect(listed).toMatch(/198\.18\.6\.0-198\.18\.6\.9, 198\.18\.6\.10-198\.18\.6\.20/);
      // Deleting the second range leaves the first as it was.
      await nft.commit(new Transaction().delete({ set: v4, elements: [range('198.18.6.10', '198.18.6.20')] }));
      expect(await readBack(nft, v4)).toEqual([range('198.18.6.0', '198.18.6.9')]);
    } finally {
      nft.close();
    }
  });
});

describe('an interval map larger than one dump message', () => {
  // Comments of different lengths make the markers of different sizes (a start carries the data
  // and the comment, an end marker neither), so that messages end between a start and its end.
  const addr = (a: number): string => `198.${18 + (a >> 16)}.${(a >> 8) & 255}.${a & 255}`;
  const map: NftSet = { family: 'ip', table: 't', name: 'big', key: [ipv4_addr], data: [inet_service], flags: ['interval'], size: 100_000 };
  const elements: SetElement[] = Array.from({ length: 30_000 }, (_, i) => ({
    key: [addr(4 * i)],
    keyEnd: [addr(4 * i + 1)],
    value: [(i % 60_000) + 1],
    comment: 'c'.repeat(1 + (i % 7)),
  }));

  it('reads back as written, in key order, from dumpSetElements and from dump', async () => {
    const nft = Nftables.open({ netns: ns().name });
    try {
      await nft.commit(withTable(map).add({ set: map, elements }));
      const streamed = (await nft.dumpSetElements(map)).elements;
      expect(streamed.length).toBe(elements.length);
      expect(streamed.filter((e) => e.keyEnd?.[0] === '255.255.255.255')).toEqual([]);
      expect(streamed).toEqual(elements);
      expect(await readBack(nft, map)).toEqual(elements);
    } finally {
      nft.close();
    }
  }, 60_000);
});
