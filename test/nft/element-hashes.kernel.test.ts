// What a restart relies on (ElementIndex.compareDump): the elements a dump reads back hash the same
// as the elements written, for the key and data types of the proxy's shared sets and maps, and
// differ once another process changed one element.

import { afterAll, expect, it } from 'vitest';
import { Nftables, Transaction, types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';
import { elementHashes, sameElementHashes } from '../../src/nft/index.js';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);
const { ipv4_addr, ipv6_addr, inet_proto, inet_service } = types;

const v4 = (i: number): string => `198.18.${(i >> 8) & 255}.${i & 255}`;
const v6 = (i: number): string => `2001:db8::${i.toString(16)}`;

const SETS: [NftSet, (i: number) => SetElement][] = [
  [{ family: 'ip', table: 't', name: 'hairpin', key: [ipv4_addr, ipv4_addr, inet_proto, inet_service] }, (i) => ({ key: [v4(i), v4(i), i % 2 ? 'tcp' : 'udp', 8000 + i] })],
  [{ family: 'ip', table: 't', name: 'cluster-ips', key: [ipv4_addr] }, (i) => ({ key: [v4(i)] })],
  [{ family: 'ip', table: 't', name: 'bucket', key: [types.integer(4, 'host')], data: [ipv4_addr, inet_service] }, (i) => ({ key: [i * 65536 + (i % 5)], value: [v4(i), 8080] })],
  [{ family: 'ip6', table: 't', name: 'bucket6', key: [types.integer(4, 'host')], data: [ipv6_addr, inet_service] }, (i) => ({ key: [i], value: [v6(i), 443] })],
  [{ family: 'ip', table: 't', name: 'commented', key: [ipv4_addr, inet_proto, inet_service], comment: 'c' }, (i) => ({ key: [v4(i), 'tcp', 80], comment: `ns/svc-${i}:http` })],
];

it('a dump of the proxy\'s kinds of shared sets hashes as what was written, decoded or hashed as read, and a changed element shows', async () => {
  const nft = Nftables.open({ netns: ns().name });
  try {
    const tx = new Transaction();
    const written = new Map<string, SetElement[]>();
    for (const [set, make] of SETS) {
      const elements = Array.from({ length: 300 }, (_, i) => make(i + 1));
      written.set(set.name, elements);
      tx.add({ table: { family: set.family, name: set.table } }).add({ set }).add({ set, elements });
    }
    await nft.commit(tx);
    for (const [set] of SETS) {
      const dumped = (await nft.dumpSetElements(set)).elements;
      expect(dumped.length).toBe(300);
      const mine = elementHashes(set, [written.get(set.name)!]);
      expect(mine, set.name).toBeDefined();
      expect(sameElementHashes(mine!, elementHashes(set, [dumped])!), set.name).toBe(true);
    }
    // A dump that hashes instead of decoding gives the same hashes, and the elements when read.
    const hashedDump = await nft.dump({ table: 't', hashElements: () => true, elementKeys: true });
    const eagerDump = await nft.dump({ table: 't', elementKeys: true });
    for (const [set] of SETS) {
      const s = hashedDump.sets.find((x) => x.name === set.name && x.family === set.family)!;
      const eager = eagerDump.sets.find((x) => x.name === set.name && x.family === set.family)!;
      expect(s.elementHashes, set.name).toBeInstanceOf(Float64Array);
      expect(eager.elementHashes).toBeUndefined();
      expect(sameElementHashes(s.elementHashes!, elementHashes(set, [written.get(set.name)!])!), set.name).toBe(true);
      // Read when asked, each on its own, as the eager dump gives them.
      expect(s.elementKeys, set.name).toEqual(eager.elementKeys);
      expect(s.elements, set.name).toEqual(eager.elements);
    }
    // Another process replaces one element of the bucket map with other data.
    const bucket = SETS[2]![0];
    const first = written.get('bucket')![0]!;
    await nft.commit(new Transaction().delete({ set: bucket, elements: [first] }).add({ set: bucket, elements: [{ key: first.key, value: [v4(999), 8080] }] }));
    const dumped = (await nft.dumpSetElements(bucket)).elements;
    expect(sameElementHashes(elementHashes(bucket, [written.get('bucket')!])!, elementHashes(bucket, [dumped])!)).toBe(false);
    const changed = (await nft.dump({ table: 't', hashElements: () => true })).sets.find((x) => x.name === 'bucket')!;
    expect(sameElementHashes(elementHashes(bucket, [written.get('bucket')!])!, changed.elementHashes!)).toBe(false);
  } finally {
    nft.close();
  }
});
