// ChangeTracker.forget: a run that ends with one sync (proxy --once, nftlink render) lets go of the
// objects once their state is built. The state already handed out must stay whole, and nothing may
// build another state from what is left.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';

function service(name: string, clusterIP: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'ns', name, resourceVersion: '1' },
    spec: { clusterIP, clusterIPs: [clusterIP], ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  };
}

function slice(service: string, addresses: string[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: 'ns', name: `${service}-a`, resourceVersion: '1', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

function trackerWithTwoServices(): ChangeTracker {
  const tracker = new ChangeTracker({ nodeName: 'node-a' });
  tracker.service('add', service('web', '198.18.0.10'));
  tracker.service('add', service('api', '198.18.0.11'));
  tracker.endpointSlice('add', slice('web', ['198.19.0.1', '198.19.0.2']));
  tracker.endpointSlice('add', slice('api', ['198.19.1.1']));
  return tracker;
}

describe('ChangeTracker.forget', () => {
  it('leaves the last snapshot\'s state whole: the sync that follows programs every service from it', () => {
    const tracker = trackerWithTwoServices();
    const snap = tracker.snapshot();
    const services = [...snap.states.ipv4.services.keys()].sort();
    const endpoints = [...snap.states.ipv4.endpoints.values()].map((eps) => eps.map((e) => e.ip).sort());
    tracker.forget();
    expect(services).toEqual(['ns/api:http', 'ns/web:http']);
    expect([...snap.states.ipv4.services.keys()].sort()).toEqual(services);
    expect([...snap.states.ipv4.endpoints.values()].map((eps) => eps.map((e) => e.ip).sort())).toEqual(endpoints);
    expect(endpoints.flat().sort()).toEqual(['198.19.0.1', '198.19.0.2', '198.19.1.1']);
  });

  it('refuses a snapshot afterwards: one built from nothing would delete every service', () => {
    const tracker = trackerWithTwoServices();
    tracker.snapshot();
    tracker.forget();
    expect(() => tracker.snapshot()).toThrow(/let go of its objects/);
  });

  it('ignores events afterwards, and holds nothing to count', () => {
    const tracker = trackerWithTwoServices();
    tracker.snapshot();
    tracker.forget();
    expect(() => {
      tracker.service('add', service('late', '198.18.0.12'));
      tracker.endpointSlice('add', slice('late', ['198.19.2.1']));
      tracker.node('update', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'z1' } } });
    }).not.toThrow();
    expect(tracker.pendingChanges()).toEqual({ services: 0, endpoints: 0, oldestQueuedAt: undefined });
    expect(tracker.sizes()).toEqual({ ipv4: { servicePorts: 0, endpoints: 0 }, ipv6: { servicePorts: 0, endpoints: 0 } });
  });
});
