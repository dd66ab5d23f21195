// The tracker's sizes before a snapshot (what a restart's read of the kernel is started with) against
// the sizes of the states the snapshot then builds.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { stateSize } from '../../../src/proxy/model/state-size.js';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';

const ports = [{ name: 'http', port: 80, protocol: 'TCP' as const }, { name: 'dns', port: 53, protocol: 'UDP' as const }];

function service(name: string, clusterIPs: string[] | undefined, n = 2): Service {
  const spec: NonNullable<Service['spec']> = clusterIPs
    ? { clusterIP: clusterIPs[0]!, clusterIPs, ipFamilies: clusterIPs.map((ip) => (ip.includes(':') ? 'IPv6' : 'IPv4')), ports: ports.slice(0, n) }
    : { clusterIP: 'None', ports: ports.slice(0, n) };
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'ns', name }, spec };
}

function slice(service: string, name: string, addressType: 'IPv4' | 'IPv6', addresses: string[], n = 2): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: 'ns', name, labels: { 'kubernetes.io/service-name': service } },
    addressType,
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
    ports: ports.slice(0, n).map((p) => ({ name: p.name, port: p.port + 8000, protocol: p.protocol })),
  };
}

describe('ChangeTracker.sizes', () => {
  it('counts, before the snapshot, the service ports and endpoints of each family that the snapshot builds', () => {
    const tracker = new ChangeTracker({ nodeName: 'node-a' });
    tracker.service('add', service('dual', ['198.18.0.10', '2001:db8::10']));
    tracker.service('add', service('one-port', ['198.18.0.11'], 1));
    tracker.endpointSlice('add', slice('dual', 'dual-4', 'IPv4', ['198.19.0.1', '198.19.0.2', '198.19.0.3']));
    tracker.endpointSlice('add', slice('dual', 'dual-6', 'IPv6', ['2001:db8:1::1']));
    tracker.endpointSlice('add', slice('one-port', 'one-port-a', 'IPv4', ['198.19.1.1', '198.19.1.2'], 1));
    const sizes = tracker.sizes();
    expect(sizes).toEqual({ ipv4: { servicePorts: 3, endpoints: 8 }, ipv6: { servicePorts: 2, endpoints: 2 } });
    const snap = tracker.snapshot();
    expect(stateSize(snap.states.ipv4)).toEqual(sizes.ipv4);
    expect(stateSize(snap.states.ipv6)).toEqual(sizes.ipv6);
  });

  it('counts from above what the snapshot leaves out or merges: headless services, endpoints in two slices', () => {
    const tracker = new ChangeTracker({ nodeName: 'node-a' });
    tracker.service('add', service('headless', undefined));
    tracker.service('add', service('moving', ['198.18.0.12'], 1));
    // One endpoint in two slices while it moves: one endpoint of the state.
    tracker.endpointSlice('add', slice('moving', 'moving-a', 'IPv4', ['198.19.2.1'], 1));
    tracker.endpointSlice('add', slice('moving', 'moving-b', 'IPv4', ['198.19.2.1'], 1));
    expect(tracker.sizes().ipv4).toEqual({ servicePorts: 1, endpoints: 2 });
    expect(stateSize(tracker.snapshot().states.ipv4)).toEqual({ servicePorts: 1, endpoints: 1 });
  });
});
