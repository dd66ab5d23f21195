// ClusterIP load balancing, UDP, IPv6-only and dual-stack services, through real connections.

import { describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import { answered, expectEvenSpread, proxyClusterFor, service, serviceChain, slice, TEST_LAYOUT } from './helpers.js';

describe('ClusterIP services', () => {
  const t = proxyClusterFor({
    pods: 3,
    prefix: 'nlp-cip',
    write: (dir, c) => {
      const pods = c.pods;
      dir.write('web', service({ name: 'web', clusterIPs: ['198.18.200.10'] }), slice({ service: 'web', endpoints: pods.map((p) => p.ipv4) }));
      dir.write('one', service({ name: 'one', clusterIPs: ['198.18.200.11'] }), slice({ service: 'one', endpoints: [pods[1]!.ipv4] }));
      dir.write(
        'dns',
        service({ name: 'dns', clusterIPs: ['198.18.200.12'], ports: [{ name: 'dns', protocol: 'UDP', port: 53 }] }),
        slice({ service: 'dns', ports: [{ name: 'dns', protocol: 'UDP', port: 8080 }], endpoints: pods.map((p) => p.ipv4) }),
      );
      dir.write('v6', service({ name: 'v6', clusterIPs: ['2001:db8:200::10'] }), slice({ service: 'v6', endpoints: pods.map((p) => p.ipv6) }));
      dir.write(
        'dual',
        service({ name: 'dual', clusterIPs: ['198.18.200.13', '2001:db8:200::13'] }),
        slice({ service: 'dual', endpoints: pods.map((p) => p.ipv4) }),
        slice({ service: 'dual', endpoints: pods.map((p) => p.ipv6) }),
      );
    },
  });

  it('spreads 300 connections from the node evenly over 3 endpoints', () => {
    const r = probe(t.c.node, '198.18.200.10', 80, { count: 300 });
    expectEvenSpread(tally(r), ['pod0', 'pod1', 'pod2']);
  });

  it('spreads 300 connections from a pod evenly over 3 endpoints (the pod itself included)', () => {
    const r = probe(t.c.pods[0]!.ns, '198.18.200.10', 80, { count: 300 });
    expectEvenSpread(tally(r), ['pod0', 'pod1', 'pod2']);
    // Pod traffic is not masqueraded, except hairpin traffic back to the pod itself.
    r.answers.forEach((pod, i) => expect(r.peers[i]).toBe(pod === 'pod0' ? '198.18.10.1' : t.c.pods[0]!.ipv4));
  });

  it('sends every connection to the only endpoint, through one DNAT rule (slots: its bucket\'s chain for one endpoint)', () => {
    const fromNode = probe(t.c.node, '198.18.200.11', 80, { count: 30 });
    const fromPod = probe(t.c.pods[2]!.ns, '198.18.200.11', 80, { count: 30 });
    expect(tally(fromNode)).toEqual({ pod1: 30 });
    expect(tally(fromPod)).toEqual({ pod1: 30 });
    const list = (...what: string[]): string => t.c.node.exec('nft', ['list', ...what]);
    if (TEST_LAYOUT === 'kube-proxy') {
      // kube-proxy 1.37 DNATs a single endpoint directly: no numgen, no map.
      const chain = list('chain', 'ip', 'kube-proxy', serviceChain('one'));
      expect(chain).toContain('meta l4proto tcp dnat to 198.18.11.2:8080');
      expect(chain).not.toContain('numgen');
      return;
    }
    // slots: reached through its ClusterIP alone, the port has no chain of its own; the chain of
    // its bucket for one endpoint finds it by the service's address, protocol and port, in the same
    // shape for every count, so a replaced endpoint is one element, not a rule.
    expect(() => list('chain', 'ip', 'kube-proxy', serviceChain('one'))).toThrow(/No such file or directory/);
    const dispatch = /198\.18\.200\.11 \. tcp \. 80 : goto (balance-(\d+)-tcp-1)\b/.exec(list('map', 'ip', 'kube-proxy', 'service-ips'));
    expect(dispatch).not.toBeNull();
    expect(list('chain', 'ip', 'kube-proxy', dispatch![1]!)).toMatch(new RegExp(`dnat ip to ip daddr \\. meta l4proto \\. tcp dport \\. numgen random mod 1 map @balance-${dispatch![2]}\\b`));
    expect(list('map', 'ip', 'kube-proxy', `balance-${dispatch![2]}`)).toContain('198.18.200.11 . tcp . 80 . 0 : 198.18.11.2 . 8080');
  });

  it('carries UDP to every endpoint, from the node, a pod and the client', () => {
    for (const from of [t.c.node, t.c.pods[1]!.ns, t.c.client]) {
      const r = probe(from, '198.18.200.12', 53, { proto: 'udp', count: 60, timeoutMs: 1000 });
      expect(answered(r)).toHaveLength(60);
      expect(Object.keys(tally(r)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
    }
  });

  it('carries an IPv6-only service over IPv6', () => {
    const r = probe(t.c.node, '2001:db8:200::10', 80, { count: 30 });
    expect(answered(r)).toHaveLength(30);
    expect(Object.keys(tally(r)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
    const fromPod = probe(t.c.pods[1]!.ns, '2001:db8:200::10', 80, { count: 10 });
    expect(answered(fromPod)).toHaveLength(10);
  });

  it('carries a dual-stack service over both families', () => {
    for (const ip of ['198.18.200.13', '2001:db8:200::13']) {
      const r = probe(t.c.node, ip, 80, { count: 30 });
      expect(answered(r), ip).toHaveLength(30);
      expect(Object.keys(tally(r)).sort(), ip).toEqual(['pod0', 'pod1', 'pod2']);
      const client = probe(t.c.client, ip, 80, { count: 10 });
      expect(answered(client), `${ip} from the client`).toHaveLength(10);
    }
  });
});
