// ClientIP session affinity through real connections: pinning, expiry, and an endpoint removed
// from under a pinned client.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, tally } from '../../src/netns/cluster.js';
import { answered, ManifestDir, service, sleep, slice, startCluster, startProxy, type Cluster, type RunningProxy } from './helpers.js';

const SHORT_TIMEOUT_S = 1;

describe('ClientIP session affinity', () => {
  let c: Cluster;
  let dir: ManifestDir;
  let px: RunningProxy;

  beforeAll(async () => {
    dir = new ManifestDir();
    c = await startCluster(3, 'nlp-aff');
    const all = c.pods.map((p) => p.ipv4);
    dir.write('expiring', service({ name: 'expiring', clusterIPs: ['198.18.200.30'], affinitySeconds: SHORT_TIMEOUT_S }), slice({ service: 'expiring', endpoints: all }));
    dir.write('sticky', service({ name: 'sticky', clusterIPs: ['198.18.200.31'], affinitySeconds: 600 }), slice({ service: 'sticky', endpoints: all }));
    px = await startProxy(c, dir);
  });

  afterAll(async () => {
    await px?.stop();
    c?.remove();
    dir?.cleanup();
  });

  it('pins 50 connections from one client to one endpoint', () => {
    for (const from of [c.client, c.node]) {
      const r = probe(from, '198.18.200.31', 80, { count: 50 });
      expect(answered(r)).toHaveLength(50);
      expect(Object.keys(tally(r)), JSON.stringify(tally(r))).toHaveLength(1);
    }
  });

  it('picks anew once the affinity timeout has passed', async () => {
    const pinned = probe(c.client, '198.18.200.30', 80, { count: 50 });
    expect(Object.keys(tally(pinned)), JSON.stringify(tally(pinned))).toHaveLength(1);
    // Each round waits out the timeout, so each connection is a fresh pick (1/3 chance to repeat).
    const picks: string[] = [];
    for (let round = 0; round < 10 && new Set(picks).size < 2; round++) {
      await sleep(SHORT_TIMEOUT_S * 1000 + 300);
      const r = probe(c.client, '198.18.200.30', 80, { count: 3 });
      expect(answered(r)).toHaveLength(3);
      // Within the timeout the new pick sticks.
      expect(new Set(r.answers).size, `round ${round}: ${r.answers}`).toBe(1);
      picks.push(r.answers[0]!);
    }
    expect(new Set(picks).size, `picks after expiry: ${picks}`).toBeGreaterThan(1);
  });

  it('moves a pinned client to another endpoint when its endpoint is removed', async () => {
    const before = probe(c.client, '198.18.200.31', 80, { count: 20 });
    const pinnedPod = before.answers[0]!;
    expect(tally(before)).toEqual({ [pinnedPod]: 20 });
    const remaining = c.pods.filter((p) => p.name !== pinnedPod).map((p) => p.ipv4);
    const synced = px.nextSync();
    dir.write('sticky', service({ name: 'sticky', clusterIPs: ['198.18.200.31'], affinitySeconds: 600 }), slice({ service: 'sticky', endpoints: remaining }));
    await synced;
    const after = probe(c.client, '198.18.200.31', 80, { count: 20 });
    expect(answered(after)).toHaveLength(20);
    const pods = Object.keys(tally(after));
    expect(pods, JSON.stringify(tally(after))).toHaveLength(1);
    expect(pods[0]).not.toBe(pinnedPod);
  });
});
