// Outside changes to the proxy's tables are repaired at once, without waiting for a Service change
// or the full-sync period: the proxy watches its tables through the library's monitor, and any
// transaction another process commits there is repaired by the next sync (right away): a rule or
// an element changed, by reading back that chain or set alone and rewriting what differs in it; a
// table flushed or deleted, by a full sync. And a writer that keeps undoing the rules is not fought
// at full speed: repairs back off, logged once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import type { SyncReport } from '../../../src/proxy/proxier.js';
import { CLUSTER, familyResult, ManifestDir, service, serviceChain, slice, startCluster, startProxy, TEST_LAYOUT, type Cluster, type RunningProxy } from './helpers.js';

const VIP = '198.18.200.60';
const NODEPORT = 30091;

const repairedSync = (r: SyncReport): boolean => r.results.some((x) => (x.full || x.repaired) && x.operations > 0);

describe('repair of outside changes to the tables', () => {
  let c: Cluster;
  let dir: ManifestDir;
  let px: RunningProxy;

  beforeAll(async () => {
    dir = new ManifestDir();
    c = await startCluster(2, 'nlp-repair');
    dir.write(
      'web',
      service({ name: 'web', type: 'NodePort', clusterIPs: [VIP], ports: [{ name: 'http', port: 80, nodePort: NODEPORT }] }),
      slice({ service: 'web', endpoints: c.pods.map((p) => p.ipv4) }),
    );
    px = await startProxy(c, dir);
  });

  afterAll(async () => {
    await px?.stop();
    c?.remove();
    dir?.cleanup();
  });

  const works = (): void => {
    expect(Object.keys(tally(probe(c.node, VIP, 80, { count: 20 }))).sort()).toEqual(['pod0', 'pod1']);
    expect(Object.keys(tally(probe(c.client, CLUSTER.nodeIPv4, NODEPORT, { count: 20 }))).sort()).toEqual(['pod0', 'pod1']);
  };
  const warnings = (): number => px.log.records.filter((r) => r.msg === 'the tables were changed by another process; repairing').length;

  /**
   * What another process does to the table, as an nft command in the node namespace, and how the
   * ip table's repair goes: a full sync, or a targeted one that reads back `chains` chains and
   * `sets` sets, compares the touched elements of `elements` sets, and writes `operations` operations.
   */
  type Repair = 'full' | { chains: number; sets: number; elements: number; operations: number };
  const TAMPERING: [string, () => string[], Repair][] = [
    ['nft flush ruleset', () => ['flush', 'ruleset'], 'full'],
    ['nft delete table ip kube-proxy', () => ['delete', 'table', 'ip', 'kube-proxy'], 'full'],
    // The one service's element written back: one operation.
    ['nft flush map ip kube-proxy service-ips', () => ['flush', 'map', 'ip', 'kube-proxy', 'service-ips'], { chains: 0, sets: 0, elements: 1, operations: 1 }],
    [
      "deleting the service chain's rule",
      () => {
        const chain = serviceChain('web');
        const handle = /# handle (\d+)/.exec(c.node.exec('nft', ['-a', 'list', 'chain', 'ip', 'kube-proxy', chain]).split('\n').find((l) => l.includes('dnat'))!)![1]!;
        return ['delete', 'rule', 'ip', 'kube-proxy', chain, 'handle', handle];
      },
      // Only that chain's rules rewritten (every rule of the chain: the other rules are the
      // kernel's still, but they are written again in order after a flush).
      { chains: 1, sets: 0, elements: 0, operations: -1 },
    ],
    // Its delete: one operation.
    ['a rogue element in service-ips', () => ['add', 'element', 'ip', 'kube-proxy', 'service-ips', '{ 198.18.200.99 . tcp . 80 : drop }'], { chains: 0, sets: 0, elements: 1, operations: 1 }],
  ];

  for (const [what, command, how] of TAMPERING) {
    it(`repairs ${what} at once, in both families, and says so`, async () => {
      works();
      const before = warnings();
      const args = command();
      const repaired = px.nextSync(repairedSync, 3000);
      c.node.exec('nft', args);
      const report = await repaired;
      const ip = familyResult(report, 'ip');
      if (how === 'full') {
        expect(ip.full).toBe(true);
        expect(ip.repaired).toBeUndefined();
      } else {
        expect(ip.full).toBe(false);
        expect(ip.repaired).toEqual({ chains: how.chains, sets: how.sets, elements: how.elements });
        if (how.operations >= 0) expect(ip.operations).toBe(how.operations);
        else expect(ip.operations).toBeGreaterThan(0);
        // The other family was not touched: nothing read back, nothing written.
        expect(familyResult(report, 'ip6')).toMatchObject({ full: false, operations: 0 });
        expect(familyResult(report, 'ip6').repaired).toBeUndefined();
      }
      works();
      expect(warnings()).toBe(before + 1);
      const tables = c.node.exec('nft', ['list', 'tables']);
      expect(tables).toContain('table ip kube-proxy');
      expect(tables).toContain('table ip6 kube-proxy');
      // The rogue element is gone: service-ips holds what the model says, nothing else.
      expect(c.node.exec('nft', ['list', 'map', 'ip', 'kube-proxy', 'service-ips'])).not.toContain(': drop');
    });
  }

  it('after a repair, the flows to the service made while its rules were missing (never DNATed) are deleted, DNATed ones stay', async () => {
    works();
    const conntrack = (args: string[]): string => c.node.exec('conntrack', args);
    const flow = (sport: number, ...reply: string[]): string[] => ['-I', '-p', 'tcp', '-s', CLUSTER.clientIPv4, '-d', VIP, '--sport', String(sport), '--dport', '80', '-t', '120', ...reply];
    // As a SYN leaves them when no rule DNATs it: the reply from the ClusterIP itself.
    conntrack([...flow(20000), '--state', 'SYN_SENT']);
    conntrack([...flow(20001), '--state', 'SYN_SENT']);
    // DNATed to a pod: a flow the outage did not touch.
    conntrack([...flow(20002, '--reply-src', c.pods[0]!.ipv4, '--reply-dst', CLUSTER.clientIPv4, '--reply-port-src', '8080', '--reply-port-dst', '20002'), '--state', 'ESTABLISHED']);
    // Source ports below the ephemeral range (32768-60999): the probes' own flows never take them.
    const sports = (): string[] => [...conntrack(['-L', '-d', VIP]).matchAll(/sport=(2000[012])\b/g)].map((m) => m[1]!).filter((p, i, all) => all.indexOf(p) === i);
    expect(sports().sort()).toEqual(['20000', '20001', '20002']);
    const repaired = px.nextSync(repairedSync, 3000);
    c.node.exec('nft', ['delete', 'element', 'ip', 'kube-proxy', 'service-ips', `{ ${VIP} . tcp . 80 }`]);
    await repaired;
    expect(sports()).toEqual(['20002']);
    works();
  });

  it(`(${TEST_LAYOUT}) backs off from a writer that keeps undoing the rules, logging it once`, async () => {
    const syncsBefore = px.reports.length;
    const fights = 30;
    for (let i = 0; i < fights; i++) {
      c.node.exec('nft', ['flush', 'map', 'ip', 'kube-proxy', 'service-ips']);
      await new Promise((r) => setTimeout(r, 100));
    }
    const syncs = px.reports.length - syncsBefore;
    // At most the few repairs allowed at once in 10 s (the cases above used some), then one per
    // doubling delay (1 s, 2 s): not one per flush.
    expect(syncs).toBeGreaterThanOrEqual(1);
    expect(syncs).toBeLessThan(9);
    expect(px.log.records.filter((r) => r.msg === 'another process keeps changing the tables; repairs back off')).toHaveLength(1);
    // Once the other writer stops, the backed-off repair still comes (it may have come already).
    const deadline = Date.now() + 10_000;
    while (!c.node.exec('nft', ['list', 'map', 'ip', 'kube-proxy', 'service-ips']).includes(VIP) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    works();
  });
});
