// detectLocalMode InterfaceNamePrefix: pod traffic is what comes in on an interface named `pod*`
// (the node's ends of the pods' veth links here), not what comes from a pod CIDR. ClusterIP traffic
// from anywhere else is masqueraded; pod traffic keeps its source.

import { describe, expect, it } from 'vitest';
import { probe } from '../../../src/netns/cluster.js';
import { CLUSTER, nodeAddressTowards, proxyClusterFor, service, slice } from './helpers.js';

describe('detectLocalMode InterfaceNamePrefix', () => {
  const t = proxyClusterFor({
    pods: 3,
    prefix: 'nlp-dlm',
    write: (dir, c) => dir.write('web', service({ name: 'web', clusterIPs: ['198.18.200.90'] }), slice({ service: 'web', endpoints: c.pods.map((p) => p.ipv4) })),
    settings: { clusterCIDRs: [], localInterface: { name: 'pod', prefix: true } },
  });

  it('matches pod traffic by interface in the ruleset, not by address', () => {
    const services = t.c.node.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', 'services']);
    expect(services).toContain('ip daddr @cluster-ips iifname != "pod*" meta mark set meta mark | 0x00004000');
    expect(services).not.toContain('ip saddr !=');
  });

  it('keeps the source of pod traffic (hairpin aside) and masquerades what came in elsewhere', () => {
    const fromPod = probe(t.c.pods[0]!.ns, '198.18.200.90', 80, { count: 60 });
    fromPod.answers.forEach((pod, i) => expect(fromPod.peers[i], pod).toBe(pod === 'pod0' ? nodeAddressTowards(t.c, 0) : t.c.pods[0]!.ipv4));
    expect(new Set(fromPod.answers).size).toBeGreaterThan(1);
    // The client's connections come in on the node's `client` link: masqueraded, so the pods see
    // the node, never the client.
    const fromClient = probe(t.c.client, '198.18.200.90', 80, { count: 30 });
    expect(fromClient.answers.filter((a) => a.startsWith('pod'))).toHaveLength(30);
    fromClient.answers.forEach((pod, i) => expect(fromClient.peers[i], pod).toBe(nodeAddressTowards(t.c, Number(pod.slice(3)))));
    expect(fromClient.peers).not.toContain(CLUSTER.clientIPv4);
  });
});
