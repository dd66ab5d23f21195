// Requests reach the kernel in the order they were made. A small commit runs on the JS thread
// (native/commit.cc, kInlineCommitBytes) and a large one, or a dump, on the libuv pool; the small
// one must wait for whatever of the same connection was queued before it.

import { expect, it } from 'vitest';
import { NftCommitError, Transaction, types } from '../../src/index.js';
import type { NftSet } from '../../src/index.js';
import { kernelSession } from '../helpers/kernel.js';

const session = kernelSession();
const table = { family: 'ip', name: 'order' } as const;
const set: NftSet = { family: 'ip', table: 'order', name: 's', key: [types.ipv4_addr] };

/** The i-th address of 198.18.0.0/15. */
const addr = (i: number): string => `198.${18 + ((i >> 16) & 1)}.${(i >> 8) & 255}.${i & 255}`;

it('a small commit made while a large one is on the pool waits for it', async () => {
  // 20,000 elements: far over the inline bound, so this one goes to the pool.
  const large = new Transaction()
    .add({ table })
    .add({ set })
    .add({ set, elements: Array.from({ length: 20_000 }, (_, i) => ({ key: [addr(i)] })) });
  // Needs the set the large one creates: run first, the kernel would refuse it (no such set).
  const small = new Transaction().add({ set, elements: [{ key: [addr(100_000)] }] });
  const results = await Promise.allSettled([session.nft.commit(large), session.nft.commit(small)]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  const { elements } = await session.nft.dumpSetElements(set);
  expect(elements.length).toBe(20_001);
}, 60_000);

it('a small commit made after a dump was asked for is not in that dump', async () => {
  const dump = session.nft.dumpSetElements(set);
  const commit = session.nft.commit(new Transaction().add({ set, elements: [{ key: [addr(100_001)] }] }));
  const [before] = await Promise.all([dump, commit]);
  expect(before.elements.some((e) => e.key[0] === addr(100_001))).toBe(false);
  const after = await session.nft.dumpSetElements(set);
  expect(after.elements.some((e) => e.key[0] === addr(100_001))).toBe(true);
});

it('a small commit the kernel refuses rejects, changes nothing, and the next one goes through', async () => {
  // The element exists; `create` refuses an existing element (EEXIST), after the first element was
  // added in the same batch: the whole batch is rolled back.
  const refused = new Transaction().add({ set, elements: [{ key: [addr(100_002)] }] }).create({ set, elements: [{ key: [addr(0)] }] });
  const err = await session.nft.commit(refused).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NftCommitError);
  expect((err as NftCommitError).message).toMatch(/File exists|exists/);
  const { elements } = await session.nft.dumpSetElements(set);
  expect(elements.some((e) => e.key[0] === addr(100_002))).toBe(false);
  expect(elements.length).toBe(20_002);
  await session.nft.commit(new Transaction().add({ set, elements: [{ key: [addr(100_003)] }] }));
  expect((await session.nft.dumpSetElements(set)).elements.length).toBe(20_003);
});
