// bench:load's shape 6 (bench/shapes.ts) is a ruleset with no chain per service: services of N
// endpoints share one chain, whose rule finds the endpoint by the packet's own address, protocol
// and port and a numgen result. Its load figures mean something only if it routes traffic as the
// service chains do, and if `nft -f` reads its text (the benchmark's other side): both shown here,
// with three services (two of 3 endpoints, one of 2) behind two chains.

import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDispatch, balanceChain, balanceMap, balanceRule, TABLE } from '../../bench/shapes.js';
import { Nftables, Transaction, type SetElement } from '../../src/nft/index.js';
import { createCluster, probe, servePod, tally, type Cluster } from '../../src/netns/cluster.js';
import { requirePrivileges } from '../helpers/netns.js';

const SERVICES = [
  { ip: '198.18.200.10', pods: [0, 1, 2] },
  { ip: '198.18.200.11', pods: [2, 0, 1] },
  { ip: '198.18.200.12', pods: [1, 2] },
];

let cluster: Cluster;
let tx: Transaction;

beforeAll(async () => {
  requirePrivileges();
  cluster = createCluster(3, 'nlbal');
  await Promise.all(cluster.pods.map((p) => servePod(p)));
  tx = new Transaction();
  const serviceIps = addDispatch(tx);
  const map = balanceMap();
  tx.add({ set: map });
  const counts = [...new Set(SERVICES.map((s) => s.pods.length))];
  for (const n of counts) tx.add({ chain: { family: 'ip', table: TABLE, name: balanceChain(n) } }).add({ rule: balanceRule(n) });
  const endpoints: SetElement[] = SERVICES.flatMap((s) => s.pods.map((p, k) => ({ key: [s.ip, 'tcp', 80, k], value: [cluster.pods[p]!.ipv4, 8080] })));
  tx.add({ set: map, elements: endpoints });
  tx.add({ set: serviceIps, elements: SERVICES.map((s) => ({ key: [s.ip, 'tcp', 80], value: { kind: 'goto', chain: balanceChain(s.pods.length) } })) });
  const nft = Nftables.open({ netns: cluster.node.name });
  try {
    await nft.commit(tx);
  } finally {
    nft.close();
  }
}, 60_000);

afterAll(() => cluster?.remove());

it('holds a chain per endpoint count, none per service', async () => {
  const nft = Nftables.open({ netns: cluster.node.name });
  try {
    const rs = await nft.dump({ family: 'ip', table: TABLE });
    expect(rs.chains.map((c) => c.name).sort()).toEqual(['balance-2', 'balance-3', 'nat-prerouting', 'services']);
    expect(rs.sets.find((s) => s.name === 'eps')?.elements).toHaveLength(8);
  } finally {
    nft.close();
  }
});

it('sends every service to its own endpoints, each endpoint taking a share', () => {
  for (const s of SERVICES) {
    const answers = tally(probe(cluster.client, s.ip, 80, { count: 45 }));
    expect(Object.keys(answers).filter((a) => a.startsWith('error:'))).toEqual([]);
    // Each of its pods answered, and no other: a uniform pick leaves one pod out of 45 tries with
    // odds of about 3 * (2/3)^45, 4e-8.
    expect(Object.keys(answers).sort()).toEqual(s.pods.map((p) => cluster.pods[p]!.name).sort());
  }
}, 60_000);

it('renders to text that nft reads', () => {
  const file = join(tmpdir(), `nftlink-balance-shape-${process.pid}.nft`);
  writeFileSync(file, tx.render());
  // -c: parsed and checked against the kernel (the table exists already), nothing applied.
  expect(() => cluster.node.exec('nft', ['-c', '-f', file])).not.toThrow();
});
