// ClientIP session affinity through real connections: pinning, expiry, and an endpoint removed
// from under a pinned client. Runs for both layouts: kube-proxy's (a chain and a timeout set per
// endpoint) and slots (pins in a shared map, two rules per service: src/proxy/layout/slots/affinity.ts).

import { describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import { answered, proxyClusterFor, service, sleep, slice, TEST_LAYOUT } from './helpers.js';

const SHORT_TIMEOUT_S = 1;

describe('ClientIP session affinity', () => {
  const t = proxyClusterFor({
    // Two pods each, apart: in the slots layout two affinity services sharing an endpoint fall back
    // to kube-proxy's per-endpoint chains (src/proxy/layout/slots/affinity.ts); this tests the pins.
    pods: 5,
    prefix: 'nlp-aff',
    write: (dir, c) => {
      const ips = c.pods.map((p) => p.ipv4);
      dir.write('expiring', service({ name: 'expiring', clusterIPs: ['198.18.200.30'], affinitySeconds: SHORT_TIMEOUT_S }), slice({ service: 'expiring', endpoints: ips.slice(0, 2) }));
      dir.write('sticky', service({ name: 'sticky', clusterIPs: ['198.18.200.31'], affinitySeconds: 600 }), slice({ service: 'sticky', endpoints: ips.slice(2) }));
    },
  });

  it('pins 50 connections from one client to one endpoint', () => {
    for (const from of [t.c.client, t.c.node]) {
      const r = probe(from, '198.18.200.31', 80, { count: 50 });
      expect(answered(r)).toHaveLength(50);
      expect(Object.keys(tally(r)), JSON.stringify(tally(r))).toHaveLength(1);
    }
  });

  it('picks anew once the affinity timeout has passed', async () => {
    const pinned = probe(t.c.client, '198.18.200.30', 80, { count: 50 });
    expect(Object.keys(tally(pinned)), JSON.stringify(tally(pinned))).toHaveLength(1);
    // Each round waits out the timeout, so each connection is a fresh pick (1/2 chance to repeat).
    const picks: string[] = [];
    for (let round = 0; round < 16 && new Set(picks).size < 2; round++) {
      await sleep(SHORT_TIMEOUT_S * 1000 + 300);
      const r = probe(t.c.client, '198.18.200.30', 80, { count: 3 });
      expect(answered(r)).toHaveLength(3);
      // Within the timeout the new pick sticks.
      expect(new Set(r.answers).size, `round ${round}: ${r.answers}`).toBe(1);
      picks.push(r.answers[0]!);
    }
    expect(new Set(picks).size, `picks after expiry: ${picks}`).toBeGreaterThan(1);
  });

  it('moves a pinned client to another endpoint when its endpoint is removed', async () => {
    const before = probe(t.c.client, '198.18.200.31', 80, { count: 20 });
    const pinnedPod = before.answers[0]!;
    expect(tally(before)).toEqual({ [pinnedPod]: 20 });
    const remaining = t.c.pods.slice(2).filter((p) => p.name !== pinnedPod).map((p) => p.ipv4);
    const synced = t.px.nextSync();
    t.dir.write('sticky', service({ name: 'sticky', clusterIPs: ['198.18.200.31'], affinitySeconds: 600 }), slice({ service: 'sticky', endpoints: remaining }));
    await synced;
    const after = probe(t.c.client, '198.18.200.31', 80, { count: 20 });
    expect(answered(after)).toHaveLength(20);
    const pods = Object.keys(tally(after));
    expect(pods, JSON.stringify(tally(after))).toHaveLength(1);
    expect(pods[0]).not.toBe(pinnedPod);
    if (TEST_LAYOUT === 'slots') {
      // The pins live in a shared map: the removed endpoint's pin is gone, the new one is there.
      const ip = (name: string): string => t.c.pods.find((p) => p.name === name)!.ipv4;
      const pinsMap = t.c.node.exec('nft', ['list', 'map', 'ip', 'kube-proxy', 'pins-0']);
      expect(pinsMap).not.toContain(`${ip(pinnedPod)} . 8080`);
      expect(pinsMap).toContain(`: ${ip(pods[0]!)} . 8080`);
    }
  });
});
