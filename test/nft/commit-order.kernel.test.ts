// Requests reach the kernel in the order they were made. A small commit runs on the JS thread
// (native/commit.cc, kInlineCommitBytes) and a large one, or a dump, on the libuv pool; the small
// one must wait for whatever of the same connection was queued before it. A table whose small
// commits cost the kernel milliseconds gets them on the pool again (kInlineCommitMaxMicros).

import { expect, it } from 'vitest';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { NftCommitError, Nftables, rule, ip, Transaction, types } from '../../src/index.js';
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

/** Whether the commit settles before the event loop's next turn: committed on the JS thread. */
async function settlesAtOnce(nft: Nftables, tx: Transaction): Promise<boolean> {
  let settled = false;
  const done = nft.commit(tx).then(() => (settled = true));
  await nextTurn();
  const atOnce = settled;
  await done;
  return atOnce;
}

it('small commits the kernel takes milliseconds over (it validates the whole table) go to the pool, and come back when they are fast', async () => {
  const nft = Nftables.open({ netns: session.ns.name });
  try {
    // A NAT base chain dispatching through a verdict map to 20,000 chains: every element with a
    // jump makes the kernel validate every chain reachable from the base chain.
    const t = 'slow';
    const map: NftSet = { family: 'ip', table: t, name: 'dispatch', key: [types.ipv4_addr], data: 'verdict' };
    const big = new Transaction()
      .add({ table: { family: 'ip', name: t } })
      .add({ chain: { family: 'ip', table: t, name: 'pre', base: { type: 'nat', hook: 'prerouting', priority: -100 } } })
      .add({ set: map })
      .add({ rule: rule('ip').vmap(ip.daddr, 'dispatch').rule(t, 'pre') });
    const chains = 20_000;
    for (let i = 0; i < chains; i++) big.add({ chain: { family: 'ip', table: t, name: `c${i}` } }).add({ rule: rule('ip').accept().rule(t, `c${i}`) });
    big.add({ set: map, elements: Array.from({ length: chains }, (_, i) => ({ key: [addr(i)], value: { kind: 'jump', chain: `c${i}` } as const })) });
    await nft.commit(big);
    const jumpTo = (i: number) => new Transaction().add({ set: map, elements: [{ key: [addr(chains + i)], value: { kind: 'jump', chain: `c${i}` } }] });
    // The first small one runs on the JS thread (nothing known yet) and is found slow: the next go to the pool.
    expect(await settlesAtOnce(nft, jumpTo(0))).toBe(true);
    expect(await settlesAtOnce(nft, jumpTo(1))).toBe(false);
    expect(await settlesAtOnce(nft, jumpTo(2))).toBe(false);
    // A table without that validation: once one commit (on the pool) measured fast, the JS thread
    // again. The measure is the thread's CPU time, not wall time, so a loaded machine (CI runs test
    // files side by side on 2 cores) descheduling the thread mid-commit does not make it slow. The
    // validating table goes first: every commit walks every chain of the namespace (Linux 6.18
    // nf_tables_commit), and its 20,000 chains alone bring a one-element commit near the bound.
    await nft.commit(new Transaction().delete({ table: { family: 'ip', name: t } }));
    const plain = { family: 'ip', table: 'order', name: 's', key: [types.ipv4_addr] } as const;
    await nft.commit(new Transaction().add({ set: plain, elements: [{ key: [addr(100_010)] }] }));
    expect(await settlesAtOnce(nft, new Transaction().add({ set: plain, elements: [{ key: [addr(100_011)] }] }))).toBe(true);
  } finally {
    nft.close();
  }
}, 60_000);
