// Two Services claiming one address and port (a duplicate ClusterIP in manifest files, a shared
// external IP): the winner is the oldest by metadata.creationTimestamp, then the first by
// namespace/name, whatever the order the objects arrive in, so a restart that reads them in
// another order programs the same one. The loser is reported once, naming both.

import { describe, expect, it } from 'vitest';
import type { Service } from '../../../src/k8s/objects.js';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';

function service(name: string, created: string | undefined, spec: NonNullable<Service['spec']>, namespace = 'ns'): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name, ...(created ? { creationTimestamp: created } : {}) },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec },
  };
}

/** A new tracker (a restart) fed `services` in this order: the ipv4 service ports and their external IPs, and the reports. */
function program(services: Service[]): { ports: Record<string, string>; invalid: string[] } {
  const tracker = new ChangeTracker({ nodeName: 'node-a' });
  for (const s of services) tracker.service('add', s);
  return read(tracker);
}

function read(tracker: ChangeTracker): { ports: Record<string, string>; invalid: string[] } {
  const snap = tracker.snapshot();
  const ports: Record<string, string> = {};
  for (const [id, sp] of snap.states.ipv4.services) ports[id] = [sp.clusterIP, ...sp.externalIPs].join(' ');
  return { ports, invalid: snap.invalid.map((i) => `${i.ref}: ${i.reason}`) };
}

const older = service('zed', '2026-01-01T00:00:00Z', { clusterIP: '198.18.0.10' });
const newer = service('abe', '2026-06-01T00:00:00Z', { clusterIP: '198.18.0.10' });

describe('duplicate ClusterIPs', () => {
  it('the oldest Service wins, in either order of arrival (a restart reading them the other way round)', () => {
    const first = program([older, newer]);
    const restarted = program([newer, older]);
    expect(first.ports).toEqual({ 'ns/zed:http': '198.18.0.10' });
    expect(restarted.ports).toEqual(first.ports);
    // One line, naming both objects.
    expect(first.invalid).toEqual([
      'ns/abe: spec.clusterIP: 198.18.0.10 port 80/TCP is also claimed by Service ns/zed, which is older (or as old and first by namespace/name): this port is left out',
    ]);
    expect(restarted.invalid).toEqual(first.invalid);
  });

  it('without creation times, the first by namespace/name wins, in either order', () => {
    const b = service('b', undefined, { clusterIP: '198.18.0.10' });
    const a = service('a', undefined, { clusterIP: '198.18.0.10' }, 'other');
    expect(program([b, a]).ports).toEqual({ 'ns/b:http': '198.18.0.10' });
    expect(program([a, b]).ports).toEqual({ 'ns/b:http': '198.18.0.10' });
    // A creation time is older than none.
    const c = service('c', '2026-01-01T00:00:00Z', { clusterIP: '198.18.0.10' }, 'zz');
    expect(program([b, c]).ports).toEqual({ 'zz/c:http': '198.18.0.10' });
  });

  it('in a running proxy, an older Service arriving later takes the address; when it goes, the other gets it back; reported once while it lasts', () => {
    const tracker = new ChangeTracker({ nodeName: 'node-a' });
    tracker.service('add', newer);
    expect(read(tracker).ports).toEqual({ 'ns/abe:http': '198.18.0.10' });
    tracker.service('add', older);
    const taken = read(tracker);
    expect(taken.ports).toEqual({ 'ns/zed:http': '198.18.0.10' });
    expect(taken.invalid).toHaveLength(1);
    // The loser changes in what it does not claim: no second report.
    tracker.service('update', { ...newer, spec: { ...newer.spec, sessionAffinity: 'ClientIP' } });
    expect(read(tracker)).toEqual({ ports: { 'ns/zed:http': '198.18.0.10' }, invalid: [] });
    // Only its endpoints change: still left out, not reported again.
    tracker.endpointSlice('add', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { namespace: 'ns', name: 'abe-1', labels: { 'kubernetes.io/service-name': 'abe' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['198.18.5.1'], conditions: { ready: true } }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
    expect(read(tracker)).toEqual({ ports: { 'ns/zed:http': '198.18.0.10' }, invalid: [] });
    tracker.service('delete', older);
    expect(read(tracker)).toEqual({ ports: { 'ns/abe:http': '198.18.0.10' }, invalid: [] });
  });

  it('different ports or protocols on one ClusterIP do not conflict', () => {
    const udp = service('dns', '2026-06-01T00:00:00Z', { clusterIP: '198.18.0.10', ports: [{ name: 'http', port: 80, protocol: 'UDP' }] });
    const other = service('alt', '2026-06-01T00:00:00Z', { clusterIP: '198.18.0.10', ports: [{ name: 'http', port: 8080 }] });
    expect(program([older, udp, other])).toEqual({ ports: { 'ns/zed:http': '198.18.0.10', 'ns/dns:http': '198.18.0.10', 'ns/alt:http': '198.18.0.10' }, invalid: [] });
  });
});

describe('duplicate external IPs', () => {
  it("the newer Service's external IP is left out of its port, which keeps its ClusterIP and other external IPs; the same after a restart", () => {
    const a = service('a', '2026-01-01T00:00:00Z', { clusterIP: '198.18.0.10', externalIPs: ['198.18.1.1'] });
    const b = service('b', '2026-02-01T00:00:00Z', { clusterIP: '198.18.0.11', externalIPs: ['198.18.1.2', '198.18.1.1'] });
    const first = program([b, a]);
    expect(first.ports).toEqual({ 'ns/a:http': '198.18.0.10 198.18.1.1', 'ns/b:http': '198.18.0.11 198.18.1.2' });
    expect(first.invalid).toEqual([expect.stringMatching(/^ns\/b: spec\.externalIPs: 198\.18\.1\.1 port 80\/TCP is also claimed by Service ns\/a, /)]);
    expect(program([a, b])).toEqual(first);
  });

  it("an external IP equal to another Service's ClusterIP on the same port is the older one's", () => {
    const a = service('a', '2026-01-01T00:00:00Z', { clusterIP: '198.18.0.10' });
    const b = service('b', '2026-02-01T00:00:00Z', { clusterIP: '198.18.0.11', externalIPs: ['198.18.0.10'] });
    expect(program([b, a]).ports).toEqual({ 'ns/a:http': '198.18.0.10', 'ns/b:http': '198.18.0.11' });
    expect(program([a, b]).ports).toEqual({ 'ns/a:http': '198.18.0.10', 'ns/b:http': '198.18.0.11' });
  });
});

describe('duplicate NodePorts', () => {
  it("the newer Service's port loses its NodePort and keeps its ClusterIP; the same after a restart", () => {
    const nodePortOf = (services: Service[]): Record<string, number> => {
      const tracker = new ChangeTracker({ nodeName: 'node-a' });
      for (const s of services) tracker.service('add', s);
      return Object.fromEntries([...tracker.snapshot().states.ipv4.services].map(([id, sp]) => [id, sp.nodePort]));
    };
    const a = service('a', '2026-01-01T00:00:00Z', { type: 'NodePort', clusterIP: '198.18.0.10', ports: [{ name: 'http', port: 80, nodePort: 30080 }] });
    const b = service('b', '2026-02-01T00:00:00Z', { type: 'NodePort', clusterIP: '198.18.0.11', ports: [{ name: 'http', port: 80, nodePort: 30080 }] });
    expect(nodePortOf([b, a])).toEqual({ 'ns/a:http': 30080, 'ns/b:http': 0 });
    expect(nodePortOf([a, b])).toEqual({ 'ns/a:http': 30080, 'ns/b:http': 0 });
  });
});
