// Topology-aware routing: the EndpointSlice controller's zone and node hints (trafficDistribution,
// the topology-mode annotation) keep Cluster traffic in this node's zone, or on this node, when
// every ready endpoint is hinted and one is hinted here; else traffic goes to every endpoint.
// This node's zone is its Node object's topology.kubernetes.io/zone label, and follows it.

import { describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import { NODE_NAME, proxyClusterFor, service, slice } from './helpers.js';

const nodeManifest = (zone: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME, labels: { 'topology.kubernetes.io/zone': zone } } });

describe('topology hints', () => {
  const t = proxyClusterFor({
    pods: 3,
    prefix: 'nlp-topo',
    write: (dir, c) => {
      const [p0, p1, p2] = c.pods.map((p) => p.ipv4) as [string, string, string];
      dir.write('node', nodeManifest('zone-a'));
      dir.write(
        'zoned',
        service({ name: 'zoned', clusterIPs: ['198.18.200.80'] }),
        slice({ service: 'zoned', endpoints: [{ ip: p0, zoneHints: ['zone-a'] }, { ip: p1, zoneHints: ['zone-b'] }, { ip: p2, zoneHints: ['zone-b'] }] }),
      );
      // Hinted, but none for zone-a: the hints are ignored.
      dir.write(
        'elsewhere',
        service({ name: 'elsewhere', clusterIPs: ['198.18.200.81'] }),
        slice({ service: 'elsewhere', endpoints: [{ ip: p0, zoneHints: ['zone-b'] }, { ip: p1, zoneHints: ['zone-c'] }] }),
      );
      // One ready endpoint without a hint: the hints are ignored.
      dir.write('partly', service({ name: 'partly', clusterIPs: ['198.18.200.82'] }), slice({ service: 'partly', endpoints: [{ ip: p0, zoneHints: ['zone-a'] }, { ip: p1 }] }));
      // Node hints (PreferSameNode) win over zone hints.
      dir.write(
        'samenode',
        service({ name: 'samenode', clusterIPs: ['198.18.200.83'] }),
        slice({
          service: 'samenode',
          endpoints: [
            { ip: p0, zoneHints: ['zone-a'], nodeHints: ['other-node'] },
            { ip: p2, zoneHints: ['zone-a'], nodeHints: [NODE_NAME] },
          ],
        }),
      );
    },
  });

  it('keeps Cluster traffic on the endpoints hinted for this node\'s zone', () => {
    expect(tally(probe(t.c.node, '198.18.200.80', 80, { count: 40 }))).toEqual({ pod0: 40 });
  });

  it('ignores hints that name no endpoint for this zone, or that some ready endpoint lacks', () => {
    expect(Object.keys(tally(probe(t.c.node, '198.18.200.81', 80, { count: 60 }))).sort()).toEqual(['pod0', 'pod1']);
    expect(Object.keys(tally(probe(t.c.node, '198.18.200.82', 80, { count: 60 }))).sort()).toEqual(['pod0', 'pod1']);
  });

  it('prefers the endpoint hinted for this node over the zone', () => {
    expect(tally(probe(t.c.node, '198.18.200.83', 80, { count: 40 }))).toEqual({ pod2: 40 });
  });

  it('follows the Node\'s zone label when it changes', async () => {
    const synced = t.px.nextSync();
    t.dir.write('node', nodeManifest('zone-b'));
    await synced;
    expect(Object.keys(tally(probe(t.c.node, '198.18.200.80', 80, { count: 60 }))).sort()).toEqual(['pod1', 'pod2']);
    // zone-b has no endpoint of "elsewhere" other than pod0: now it alone.
    expect(tally(probe(t.c.node, '198.18.200.81', 80, { count: 40 }))).toEqual({ pod0: 40 });
  });
});
