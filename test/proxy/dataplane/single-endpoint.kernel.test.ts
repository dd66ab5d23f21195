// A service with one endpoint, both families: real connections reach it (from the node, another
// pod, the pod itself through hairpin masquerade, and a client looping through every change), the
// kube-proxy layout DNATs it with one direct rule (kube-proxy 1.37, docs/kube-proxy-contract.md),
// scaling 1 -> 2 -> 1 endpoints is two partial syncs that swap that rule for the numgen map and
// back, and a restarted proxy reads the direct rule back and writes nothing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import {
  familyResult,
  ManifestDir,
  nodeAddressTowards,
  probeLoop,
  service,
  serviceChain,
  slice,
  startCluster,
  startProxy,
  TEST_LAYOUT,
  type Cluster,
  type RunningProxy,
} from './helpers.js';

const VIP4 = '198.18.200.50';
const VIP6 = '2001:db8:200::50';

describe('a one-endpoint service', () => {
  let c: Cluster;
  let dir: ManifestDir;
  let px: RunningProxy;

  /** The service with these pods as endpoints, in both families. */
  const endpoints = (pods: number[]): void =>
    dir.write(
      'solo',
      service({ name: 'solo', clusterIPs: [VIP4, VIP6] }),
      slice({ service: 'solo', endpoints: pods.map((i) => c.pods[i]!.ipv4) }),
      slice({ service: 'solo', endpoints: pods.map((i) => c.pods[i]!.ipv6) }),
    );
  const chain = (family: 'ip' | 'ip6'): string => c.node.exec('nft', ['list', 'chain', family, 'kube-proxy', serviceChain('solo')]);
  /** The service chain's rules as `nft list` shows them, one per line, trimmed. */
  const rules = (family: 'ip' | 'ip6'): string[] =>
    chain(family)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('meta ') || l.startsWith('ip') || l.startsWith('numgen'));
  /** The one direct rule kube-proxy 1.37 writes for a single endpoint, as the node lists it. */
  const direct = (pod: number): { ip: string[]; ip6: string[] } => ({
    ip: [`meta l4proto tcp dnat to ${c.pods[pod]!.ipv4}:8080`],
    ip6: [`meta l4proto tcp dnat to [${c.pods[pod]!.ipv6}]:8080`],
  });
  const expectDirect = (pod: number): void => {
    if (TEST_LAYOUT !== 'kube-proxy') return;
    expect({ ip: rules('ip'), ip6: rules('ip6') }).toEqual(direct(pod));
  };
  const reaches = (vip: string, from = c.node, count = 20): Record<string, number> => tally(probe(from, vip, 80, { count }));

  beforeAll(async () => {
    dir = new ManifestDir();
    c = await startCluster(2, 'nlp-solo');
    endpoints([0]);
    px = await startProxy(c, dir);
  });

  afterAll(async () => {
    await px?.stop();
    c?.remove();
    dir?.cleanup();
  });

  it('answers through one direct DNAT rule, in both families', () => {
    expect(reaches(VIP4)).toEqual({ pod0: 20 });
    expect(reaches(VIP6)).toEqual({ pod0: 20 });
    expect(reaches(VIP4, c.pods[1]!.ns)).toEqual({ pod0: 20 });
    expect(reaches(VIP6, c.pods[1]!.ns)).toEqual({ pod0: 20 });
    // The endpoint reaching itself through the service is masqueraded (hairpin-connections).
    const hairpin = probe(c.pods[0]!.ns, VIP4, 80, { count: 5 });
    expect(tally(hairpin)).toEqual({ pod0: 5 });
    for (const peer of hairpin.peers) expect(peer).toBe(nodeAddressTowards(c, 0));
    expectDirect(0);
    if (TEST_LAYOUT === 'kube-proxy') expect(chain('ip') + chain('ip6')).not.toContain('numgen');
  });

  it('scales 1 -> 2 -> 1 endpoints through partial syncs, answering all along', async () => {
    const loop = probeLoop(c.client, VIP4, 80);
    try {
      await loop.started;

      let synced = px.nextSync();
      endpoints([0, 1]);
      let report = await synced;
      for (const family of ['ip', 'ip6'] as const) {
        const r = familyResult(report, family);
        expect(r.full, family).toBe(false);
        expect(r.chainsWritten, family).toBe(1);
      }
      expect(Object.keys(reaches(VIP4, c.node, 40)).sort()).toEqual(['pod0', 'pod1']);
      expect(Object.keys(reaches(VIP6, c.node, 40)).sort()).toEqual(['pod0', 'pod1']);
      if (TEST_LAYOUT === 'kube-proxy') {
        expect(rules('ip')).toEqual([`meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : ${c.pods[0]!.ipv4} . 8080, 1 : ${c.pods[1]!.ipv4} . 8080 }`]);
        expect(rules('ip6')).toEqual([`meta l4proto tcp dnat ip6 to numgen random mod 2 map { 0 : ${c.pods[0]!.ipv6} . 8080, 1 : ${c.pods[1]!.ipv6} . 8080 }`]);
      }

      // Back to one endpoint, another one: the direct rule again, with the new address.
      synced = px.nextSync();
      endpoints([1]);
      report = await synced;
      for (const family of ['ip', 'ip6'] as const) {
        const r = familyResult(report, family);
        expect(r.full, family).toBe(false);
        expect(r.chainsWritten, family).toBe(1);
      }
      expect(reaches(VIP4)).toEqual({ pod1: 20 });
      expect(reaches(VIP6)).toEqual({ pod1: 20 });
      expectDirect(1);
      // Let the client loop past the last change.
      const seen = loop.count();
      while (loop.count() < seen + 10) await new Promise((r) => setTimeout(r, 20));
    } finally {
      const answers = await loop.stop();
      expect(answers.filter((a) => a.startsWith('error:'))).toEqual([]);
      expect(new Set(answers)).toEqual(new Set(['pod0', 'pod1']));
    }
  });

  it('a restarted proxy reads the direct rule back and writes nothing', async () => {
    await px.stop();
    px = await startProxy(c, dir);
    const first = px.reports[0]!;
    expect(first.error).toBeUndefined();
    for (const r of first.results) expect(r.operations, `${r.family}: ${JSON.stringify(r)}`).toBe(0);
    expect(reaches(VIP4)).toEqual({ pod1: 20 });
    expect(reaches(VIP6)).toEqual({ pod1: 20 });
    expectDirect(1);
  });
});
