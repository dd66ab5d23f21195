// Traffic from outside the cluster: NodePorts (and which node IPs take them), ExternalIPs,
// LoadBalancer IPs and their source ranges, services without (local) endpoints, and what the
// backend sees of the client under each externalTrafficPolicy.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import {
  answered,
  CLUSTER,
  ManifestDir,
  nodeAddressTowards,
  service,
  slice,
  startCluster,
  startProxy,
  type Cluster,
  type RunningProxy,
} from './helpers.js';

const NODE_SECOND_IP = '198.19.0.3';
const CLIENT_SECOND_IP = '198.19.0.4';
const EXTERNAL_IP = '198.19.50.1';
const LB_IP = '198.19.50.2';
const LB_LOCAL_NONE = '198.19.50.3';
const LB_CLUSTER = '198.19.50.4';
const DROP_TIMEOUT_MS = 1000;

/**
 * Every attempt fails with an error that is not a timeout: a reject answers (the client sees the
 * refusal), where a drop leaves it waiting until DROP_TIMEOUT_MS. Told by the error, not by a time
 * limit, which a loaded machine would break.
 */
function expectRefusedAtOnce(r: ReturnType<typeof probe>, what: string): void {
  r.answers.forEach((a) => {
    expect(a, what).toMatch(/^error:/);
    expect(a, what).not.toBe('error:timeout');
  });
}

function expectDropped(r: ReturnType<typeof probe>, what: string): void {
  for (const a of r.answers) expect(a, what).toBe('error:timeout');
}

describe('external traffic', () => {
  let c: Cluster;
  let dir: ManifestDir;
  let px: RunningProxy;
  const nodeIPs = [CLUSTER.nodeIPv4, NODE_SECOND_IP, CLUSTER.nodeIPv6];

  beforeAll(async () => {
    dir = new ManifestDir();
    c = await startCluster(3, 'nlp-ext');
    c.node.exec('ip', ['addr', 'add', `${NODE_SECOND_IP}/24`, 'dev', 'client']);
    c.client.exec('ip', ['addr', 'add', `${CLIENT_SECOND_IP}/24`, 'dev', 'eth0']);
    const all = c.pods.map((p) => p.ipv4);
    const remote = c.pods.map((p) => ({ ip: p.ipv4, nodeName: 'other-node' }));
    dir.write('np', service({ name: 'np', type: 'NodePort', clusterIPs: ['198.18.200.20'], ports: [{ name: 'http', port: 80, nodePort: 30080 }] }), slice({ service: 'np', endpoints: all }));
    dir.write('ext', service({ name: 'ext', clusterIPs: ['198.18.200.21'], externalIPs: [EXTERNAL_IP] }), slice({ service: 'ext', endpoints: all }));
    dir.write(
      'lb',
      service({
        name: 'lb',
        type: 'LoadBalancer',
        clusterIPs: ['198.18.200.22'],
        ports: [{ name: 'http', port: 80, nodePort: 30081 }],
        loadBalancerIPs: [LB_IP],
        loadBalancerSourceRanges: [`${CLUSTER.clientIPv4}/32`],
      }),
      slice({ service: 'lb', endpoints: all }),
    );
    dir.write('noeps', service({ name: 'noeps', type: 'NodePort', clusterIPs: ['198.18.200.23'], ports: [{ name: 'http', port: 80, nodePort: 30082 }] }));
    dir.write(
      'local-none',
      service({
        name: 'local-none',
        type: 'LoadBalancer',
        clusterIPs: ['198.18.200.24'],
        ports: [{ name: 'http', port: 80, nodePort: 30083 }],
        loadBalancerIPs: [LB_LOCAL_NONE],
        externalTrafficPolicy: 'Local',
      }),
      slice({ service: 'local-none', endpoints: remote }),
    );
    dir.write(
      'cluster-remote',
      service({
        name: 'cluster-remote',
        type: 'LoadBalancer',
        clusterIPs: ['198.18.200.25'],
        ports: [{ name: 'http', port: 80, nodePort: 30084 }],
        loadBalancerIPs: [LB_CLUSTER],
      }),
      slice({ service: 'cluster-remote', endpoints: remote }),
    );
    dir.write(
      'local',
      service({ name: 'local', type: 'NodePort', clusterIPs: ['198.18.200.26'], ports: [{ name: 'http', port: 80, nodePort: 30085 }], externalTrafficPolicy: 'Local' }),
      slice({ service: 'local', endpoints: [c.pods[0]!.ipv4, { ip: c.pods[1]!.ipv4, nodeName: 'other-node' }, { ip: c.pods[2]!.ipv4, nodeName: 'other-node' }] }),
    );
    dir.write(
      'both-local',
      service({
        name: 'both-local',
        type: 'NodePort',
        clusterIPs: ['198.18.200.27'],
        ports: [{ name: 'http', port: 80, nodePort: 30086 }],
        externalTrafficPolicy: 'Local',
        internalTrafficPolicy: 'Local',
      }),
      slice({ service: 'both-local', endpoints: [c.pods[0]!.ipv4, { ip: c.pods[1]!.ipv4, nodeName: 'other-node' }, { ip: c.pods[2]!.ipv4, nodeName: 'other-node' }] }),
    );
    px = await startProxy(c, dir, { nodeIPs, nodePortAddresses: [`${CLUSTER.nodeIPv4}/32`] });
  });

  afterAll(async () => {
    await px?.stop();
    c?.remove();
    dir?.cleanup();
  });

  describe('NodePort', () => {
    it('answers on the node IP from the client, over every endpoint', () => {
      const r = probe(c.client, CLUSTER.nodeIPv4, 30080, { count: 30 });
      expect(answered(r)).toHaveLength(30);
      expect(Object.keys(tally(r)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
    });

    it('does not answer on a node IP outside nodePortAddresses', () => {
      const r = probe(c.client, NODE_SECOND_IP, 30080, { count: 5, timeoutMs: DROP_TIMEOUT_MS });
      expect(answered(r)).toEqual([]);
      // Not DNATed: the node's own (closed) port 30080 answers with a reset.
      for (const a of r.answers) expect(a).toBe('error:ECONNREFUSED');
      // The ClusterIP still answers from the same client.
      expect(answered(probe(c.client, '198.18.200.20', 80, { count: 5 }))).toHaveLength(5);
    });
  });

  describe('ExternalIP and LoadBalancer', () => {
    it('reaches an ExternalIP from the client (from any source address)', () => {
      for (const localAddress of [CLUSTER.clientIPv4, CLIENT_SECOND_IP]) {
        const r = probe(c.client, EXTERNAL_IP, 80, { count: 30, localAddress });
        expect(answered(r), localAddress).toHaveLength(30);
        expect(Object.keys(tally(r)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
      }
    });

    it('reaches a LoadBalancer IP from an allowed source; drops another source', () => {
      const allowed = probe(c.client, LB_IP, 80, { count: 30, localAddress: CLUSTER.clientIPv4 });
      expect(answered(allowed)).toHaveLength(30);
      expect(Object.keys(tally(allowed)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
      const denied = probe(c.client, LB_IP, 80, { count: 2, timeoutMs: DROP_TIMEOUT_MS, localAddress: CLIENT_SECOND_IP });
      expectDropped(denied, 'LB IP from a source outside loadBalancerSourceRanges');
      // The source ranges guard the LB IP only: that source still reaches the service's NodePort.
      expect(answered(probe(c.client, CLUSTER.nodeIPv4, 30081, { count: 5, localAddress: CLIENT_SECOND_IP }))).toHaveLength(5);
    });
  });

  describe('no endpoints', () => {
    it('refuses at once: ClusterIP from the node and a pod; NodePort from the client', () => {
      expectRefusedAtOnce(probe(c.node, '198.18.200.23', 80, { count: 5 }), 'ClusterIP from the node');
      expectRefusedAtOnce(probe(c.pods[0]!.ns, '198.18.200.23', 80, { count: 5 }), 'ClusterIP from a pod');
      // (Not the ClusterIP from the client: its route on the node leads back out the client link,
      // and the kernel does not deliver the reject's ICMP error to the client then; see the report.)
      expectRefusedAtOnce(probe(c.client, CLUSTER.nodeIPv4, 30082, { count: 5 }), 'NodePort from the client');
    });

    it('externalTrafficPolicy Local without a local endpoint drops NodePort and LB traffic', () => {
      expectDropped(probe(c.client, CLUSTER.nodeIPv4, 30083, { count: 2, timeoutMs: DROP_TIMEOUT_MS }), 'NodePort, ETP Local, no local endpoint');
      expectDropped(probe(c.client, LB_LOCAL_NONE, 80, { count: 2, timeoutMs: DROP_TIMEOUT_MS }), 'LB IP, ETP Local, no local endpoint');
      // Internal traffic is Cluster policy: the ClusterIP still reaches the remote endpoints.
      expect(answered(probe(c.node, '198.18.200.24', 80, { count: 10 }))).toHaveLength(10);
    });

    it('a Cluster-policy service with the same (remote) endpoints works', () => {
      const np = probe(c.client, CLUSTER.nodeIPv4, 30084, { count: 30 });
      expect(answered(np)).toHaveLength(30);
      expect(Object.keys(tally(np)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
      expect(answered(probe(c.client, LB_CLUSTER, 80, { count: 15 }))).toHaveLength(15);
    });
  });

  describe('externalTrafficPolicy', () => {
    it('Local: only the local endpoint gets NodePort traffic, and it sees the client address', () => {
      const r = probe(c.client, CLUSTER.nodeIPv4, 30085, { count: 30 });
      expect(tally(r)).toEqual({ pod0: 30 });
      expect(new Set(r.peers)).toEqual(new Set([CLUSTER.clientIPv4]));
      // Inside the cluster the ClusterIP still uses every endpoint (internalTrafficPolicy Cluster).
      expect(Object.keys(tally(probe(c.node, '198.18.200.26', 80, { count: 30 }))).sort()).toEqual(['pod0', 'pod1', 'pod2']);
    });

    it('Local for both policies: the client reaches the local endpoint only, the node itself every endpoint (short-circuit)', () => {
      expect(tally(probe(c.client, CLUSTER.nodeIPv4, 30086, { count: 20 }))).toEqual({ pod0: 20 });
      // kube-proxy keeps cluster endpoints for any externally reachable port (UsesClusterEndpoints):
      // traffic from the node to its own NodePort goes through the external chain's short-circuit.
      expect(Object.keys(tally(probe(c.node, CLUSTER.nodeIPv4, 30086, { count: 30 }))).sort()).toEqual(['pod0', 'pod1', 'pod2']);
      // The ClusterIP follows internalTrafficPolicy Local.
      expect(tally(probe(c.node, '198.18.200.27', 80, { count: 20 }))).toEqual({ pod0: 20 });
    });

    it('Cluster: the backend sees the node address (masquerade), never the client', () => {
      const r = probe(c.client, CLUSTER.nodeIPv4, 30080, { count: 30 });
      expect(answered(r)).toHaveLength(30);
      r.answers.forEach((pod, i) => expect(r.peers[i], pod).toBe(nodeAddressTowards(c, Number(pod.slice(3)))));
    });
  });

  // Last: it replaces the describe's proxy.
  it('a wider nodePortAddresses makes the second node IP answer (after a restart on the same table)', async () => {
    await px.stop();
    px = await startProxy(c, dir, { nodeIPs, nodePortAddresses: ['198.19.0.0/24'] });
    for (const ip of [CLUSTER.nodeIPv4, NODE_SECOND_IP]) {
      expect(answered(probe(c.client, ip, 30080, { count: 10 })), ip).toHaveLength(10);
    }
  });
});
