// The addon hashes a dump's set elements on its own thread (native/element-hash.h, dump flag 1024)
// so that a restart's comparison (ElementIndex.compareDump) does not on the JavaScript thread. Its
// numbers must be the ones TypeScript gives the written elements (src/nft/element-hash.ts), for
// every piece an element hashes: key, data, verdict kind and chain, comment, timeout. An element
// with text other than ASCII is declined (the set's kind-8 op carries no hashes) and TypeScript
// hashes that set itself, to the same answer.

import { afterAll, expect, it } from 'vitest';
import { elementHashes, Nftables, sameElementHashes, Transaction, types } from '../../src/nft/index.js';
import type { NftSet, SetElement } from '../../src/nft/index.js';
import { loadNative } from '../../src/native/binding.js';
import { decode } from '../native/compact-format.js';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);
const { ipv4_addr, inet_service } = types;
const TABLE = 't';
const v4 = (i: number): string => `198.18.${(i >> 8) & 255}.${i & 255}`;
const set = (name: string, rest: Partial<NftSet>): NftSet => ({ family: 'ip', table: TABLE, name, key: [ipv4_addr], ...rest });

const VERDICTS = ['accept', 'drop', 'return', 'continue'] as const;

/** Each set, its elements, and whether the addon hashes it (false: declined, TypeScript hashes it). */
const CASES: { set: NftSet; elements: SetElement[]; native: boolean }[] = [
  {
    set: set('verdicts', { data: 'verdict' }),
    elements: Array.from({ length: 60 }, (_, i) => ({
      key: [v4(i + 1)],
      value: i % 3 === 0 ? { kind: 'goto', chain: 'svc-a' } : i % 3 === 1 ? { kind: 'jump', chain: 'svc-b' } : { kind: VERDICTS[i % 4]! },
      ...(i % 5 === 0 ? { comment: `ns/svc-${i}:http` } : {}),
    })),
    native: true,
  },
  {
    set: set('expiring', { data: 'verdict', flags: ['timeout'] }),
    elements: Array.from({ length: 20 }, (_, i) => ({ key: [v4(i + 1)], value: { kind: 'accept' }, timeout: 60_000 + i * 1000 })),
    native: true,
  },
  {
    set: set('endpoints', { key: [types.integer(4, 'host')], data: [ipv4_addr, inet_service] }),
    elements: Array.from({ length: 300 }, (_, i) => ({ key: [i], value: [v4(i + 1), 8080 + (i % 3)], ...(i % 7 === 0 ? { comment: 'c' } : {}) })),
    native: true,
  },
  {
    set: set('plain', {}),
    elements: Array.from({ length: 100 }, (_, i) => ({ key: [v4(i + 1)] })),
    native: true,
  },
  {
    set: set('chain-not-ascii', { data: 'verdict' }),
    elements: [
      { key: [v4(1)], value: { kind: 'goto', chain: 'svc-ä' } },
      { key: [v4(2)], value: { kind: 'accept' } },
    ],
    native: false,
  },
  {
    set: set('comment-not-ascii', {}),
    elements: [{ key: [v4(1)], comment: 'naïve' }, { key: [v4(2)] }],
    native: false,
  },
];

it('the addon hashes dumped elements as TypeScript hashes the written ones, and declines text other than ASCII', async () => {
  const netns = ns().name;
  const nft = Nftables.open({ netns });
  try {
    const tx = new Transaction().add({ table: { family: 'ip', name: TABLE } });
    for (const chain of ['svc-a', 'svc-b', 'svc-ä']) tx.add({ chain: { family: 'ip', table: TABLE, name: chain } });
    const ranges = set('ranges', { flags: ['interval'] });
    for (const c of CASES) tx.add({ set: c.set }).add({ set: c.set, elements: c.elements });
    tx.add({ set: ranges }).add({ set: ranges, elements: [{ key: [v4(1)], keyEnd: [v4(9)] }] });
    await nft.commit(tx);

    // What the addon sends: a kind-8 op after each named, non-interval set's elements, with hashes
    // unless it declined an element.
    const native = loadNative();
    const h = native.open(netns);
    let ops;
    try {
      ops = decode(await native.dump(h, 4 | 8 | 1024, 0, TABLE)).ops;
    } finally {
      native.close(h);
    }
    const name = (o: { attrs: Map<number, Uint8Array> }): string => new TextDecoder().decode(o.attrs.get(1)!).replace(/\0$/, '');
    const hashOps = new Map(ops.filter((o) => o.kind === 8).map((o) => [name(o), o]));
    expect([...hashOps.keys()].sort()).toEqual(CASES.map((c) => c.set.name).sort());
    for (const c of CASES) {
      const hashes = hashOps.get(c.set.name)!.attrs.get(2);
      expect(hashes !== undefined, c.set.name).toBe(c.native);
      if (hashes) expect(hashes.length, c.set.name).toBe(8 * c.elements.length);
    }

    // Through the library: every set's hashes are those of the written elements, whichever side
    // hashed them; the elements decode when read; the interval set is not hashed.
    const dumped = await nft.dump({ table: TABLE, hashElements: () => true, elementKeys: true });
    const eager = await nft.dump({ table: TABLE, elementKeys: true });
    for (const c of CASES) {
      const s = dumped.sets.find((x) => x.name === c.set.name)!;
      const written = elementHashes(s, [c.elements]);
      expect(written, c.set.name).toBeDefined();
      expect(s.elementHashes, c.set.name).toBeInstanceOf(Float64Array);
      expect(sameElementHashes(s.elementHashes!, written!), c.set.name).toBe(true);
      const e = eager.sets.find((x) => x.name === c.set.name)!;
      // (Less `expires`: the time left, which moves between the two dumps.)
      const lasting = (list: readonly SetElement[] | undefined) => list?.map(({ expires: _, ...rest }) => rest);
      expect(lasting(s.elements), c.set.name).toEqual(lasting(e.elements));
      expect(s.elementKeys, c.set.name).toEqual(e.elementKeys);
    }
    expect(dumped.sets.find((x) => x.name === 'ranges')!.elementHashes).toBeUndefined();

    // One element's data changed by another writer: the addon's hashes differ from the written ones.
    const endpoints = CASES[2]!;
    const first = endpoints.elements[0]!;
    await nft.commit(new Transaction().delete({ set: endpoints.set, elements: [first] }).add({ set: endpoints.set, elements: [{ ...first, value: [v4(999), 8080] }] }));
    const changed = (await nft.dump({ table: TABLE, hashElements: () => true })).sets.find((x) => x.name === 'endpoints')!;
    expect(sameElementHashes(changed.elementHashes!, elementHashes(changed, [endpoints.elements])!)).toBe(false);
  } finally {
    nft.close();
  }
});
