import { describe, expect, it } from 'vitest';
import type { Endpoint, EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { categorizeEndpoints } from '../../../src/proxy/model/categorize.js';
import { mergeEndpoints, readEndpointSlice, type EndpointSliceInfo } from '../../../src/proxy/model/endpoints.js';
import { servicePorts } from '../../../src/proxy/model/service.js';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';
import type { IPFamily, ServiceEndpoint, ServicePort } from '../../../src/proxy/model/types.js';

function service(name: string, spec: NonNullable<Service['spec']>, extra: Partial<Service> = {}): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    ...extra,
    metadata: { namespace: 'ns', name, ...extra.metadata },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec },
  };
}

function slice(name: string, svc: string, addressType: string, endpoints: Endpoint[], ports = [{ name: 'http', port: 8080, protocol: 'TCP' }]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: 'ns', name, labels: { 'kubernetes.io/service-name': svc } },
    addressType,
    endpoints,
    ports,
  };
}

function portsOf(svc: Service, family: IPFamily): ServicePort[] {
  const result = servicePorts(svc, family);
  if (!('ports' in result)) throw new Error(`expected ports, got ${JSON.stringify(result)}`);
  return result.ports;
}

function reasonOf(svc: Service): string {
  const result = servicePorts(svc, 'ipv4');
  if (!('invalid' in result)) throw new Error(`expected invalid, got ${JSON.stringify(result)}`);
  expect(result.invalid.kind).toBe('Service');
  return `${result.invalid.ref}: ${result.invalid.reason}`;
}

function sliceInfo(s: EndpointSlice): EndpointSliceInfo {
  const result = readEndpointSlice(s);
  if (!('slice' in result)) throw new Error(`expected a slice, got ${JSON.stringify(result)}`);
  return result.slice;
}

const ep = (ip: string, conditions: Endpoint['conditions'] = {}, nodeName?: string): Endpoint => ({
  addresses: [ip],
  conditions,
  ...(nodeName ? { nodeName } : {}),
});

describe('servicePorts', () => {
  it('a ClusterIP service: one ServicePort per port, defaults filled in', () => {
    const svc = service('web', {
      clusterIP: '198.18.96.10',
      ports: [{ name: 'http', port: 80 }, { name: 'dns', port: 53, protocol: 'UDP' }],
    });
    const [http, dns] = portsOf(svc, 'ipv4');
    expect(http).toEqual({
      id: 'ns/web:http',
      namespace: 'ns',
      name: 'web',
      portName: 'http',
      protocol: 'TCP',
      family: 'ipv4',
      clusterIP: '198.18.96.10',
      port: 80,
      nodePort: 0,
      externalIPs: [],
      loadBalancerIPs: [],
      loadBalancerSourceRanges: [],
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      affinityTimeoutSeconds: 0,
      healthCheckNodePort: 0,
      external: false,
    });
    expect(dns).toMatchObject({ id: 'ns/web:dns', protocol: 'UDP', port: 53 });
    expect(servicePorts(svc, 'ipv6')).toEqual({ skipped: 'no IPv6 ClusterIP' });
  });

  it('an unnamed port gets the id "ns/name:"', () => {
    expect(portsOf(service('web', { clusterIP: '198.18.96.10', ports: [{ port: 80 }] }), 'ipv4')[0]!.id).toBe('ns/web:');
  });

  it('NodePort: external, ETP Local kept, no health check port (only LoadBalancer has one)', () => {
    const svc = service('np', {
      type: 'NodePort',
      clusterIP: '198.18.96.11',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32000,
      ports: [{ name: 'http', port: 80, nodePort: 30080 }],
    });
    expect(portsOf(svc, 'ipv4')[0]).toMatchObject({ external: true, nodePort: 30080, externalTrafficPolicy: 'Local', healthCheckNodePort: 0 });
  });

  it('LoadBalancer: VIP ingress IPs by family, Proxy mode excluded, source ranges canonical, health check port with ETP Local', () => {
    const svc = service(
      'lb',
      {
        type: 'LoadBalancer',
        clusterIPs: ['198.18.96.12', '2001:db8::12'],
        ipFamilies: ['IPv4', 'IPv6'],
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32001,
        loadBalancerSourceRanges: [' 198.18.2.7/24 ', '2001:db8::/32'],
        ports: [{ name: 'http', port: 80, nodePort: 30081 }],
      },
      {
        status: {
          loadBalancer: {
            ingress: [{ ip: '198.19.113.1' }, { ip: '198.19.113.2', ipMode: 'Proxy' }, { ip: '2001:DB8::1', ipMode: 'VIP' }, { hostname: 'lb.example' }],
          },
        },
      },
    );
    expect(portsOf(svc, 'ipv4')[0]).toMatchObject({
      clusterIP: '198.18.96.12',
      loadBalancerIPs: ['198.19.113.1'],
      loadBalancerSourceRanges: ['198.18.2.0/24'],
      healthCheckNodePort: 32001,
      externalTrafficPolicy: 'Local',
    });
    expect(portsOf(svc, 'ipv6')[0]).toMatchObject({
      id: 'ns/lb:http',
      family: 'ipv6',
      clusterIP: '2001:db8::12',
      loadBalancerIPs: ['2001:db8::1'],
      loadBalancerSourceRanges: ['2001:db8::/32'],
    });
  });

  it('externalIPs make a ClusterIP service external and are split by family', () => {
    const svc = service('ext', {
      clusterIPs: ['2001:db8::13', '198.18.96.13'],
      ipFamilies: ['IPv6', 'IPv4'],
      externalIPs: ['198.19.100.1', '2001:db8::5'],
      externalTrafficPolicy: 'Local',
    });
    expect(portsOf(svc, 'ipv4')[0]).toMatchObject({ clusterIP: '198.18.96.13', externalIPs: ['198.19.100.1'], external: true, externalTrafficPolicy: 'Local' });
    expect(portsOf(svc, 'ipv6')[0]).toMatchObject({ clusterIP: '2001:db8::13', externalIPs: ['2001:db8::5'] });
  });

  it('ETP Local does not count for a service without external traffic; ITP Local does', () => {
    const svc = service('int', { clusterIP: '198.18.96.14', externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local' });
    expect(portsOf(svc, 'ipv4')[0]).toMatchObject({ externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Local', external: false });
  });

  it('an IPv6-only service and the clusterIP fallback without ipFamilies', () => {
    const v6 = service('v6', { clusterIP: '2001:db8::20' });
    expect(portsOf(v6, 'ipv6')[0]!.clusterIP).toBe('2001:db8::20');
    expect(servicePorts(v6, 'ipv4')).toEqual({ skipped: 'no IPv4 ClusterIP' });
  });

  it('ClientIP affinity: default 10800 s, the configured timeout otherwise', () => {
    expect(portsOf(service('a', { clusterIP: '198.18.96.15', sessionAffinity: 'ClientIP' }), 'ipv4')[0]!.affinityTimeoutSeconds).toBe(10800);
    const custom = service('b', { clusterIP: '198.18.96.16', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } });
    expect(portsOf(custom, 'ipv4')[0]!.affinityTimeoutSeconds).toBe(60);
  });

  it('skips headless, ExternalName and other proxies\' services', () => {
    expect(servicePorts(service('h', { clusterIP: 'None' }), 'ipv4')).toEqual({ skipped: 'headless (no ClusterIP)' });
    expect(servicePorts(service('h2', {}), 'ipv4')).toEqual({ skipped: 'headless (no ClusterIP)' });
    expect(servicePorts(service('x', { type: 'ExternalName', externalName: 'example.com' }), 'ipv4')).toEqual({ skipped: 'type ExternalName' });
    const other = service('o', { clusterIP: '198.18.96.17' }, { metadata: { labels: { 'service.kubernetes.io/service-proxy-name': 'cilium' } } });
    expect('skipped' in servicePorts(other, 'ipv4')).toBe(true);
  });

  it('a 63-character namespace and name with a long port name are valid', () => {
    const long = 'n'.repeat(63);
    const svc: Service = {
      metadata: { namespace: long, name: long },
      spec: { clusterIP: '198.18.96.18', ports: [{ name: 'p'.repeat(63), port: 80 }] },
    };
    expect(portsOf(svc, 'ipv4')[0]!.id).toBe(`${long}/${long}:${'p'.repeat(63)}`);
  });

  it('rejects the whole Service, naming the field and the reason', () => {
    const ok = { clusterIP: '198.18.96.30' };
    expect(reasonOf(service('badip', { clusterIP: '198.18.96.300' }))).toBe('ns/badip: spec.clusterIP: "198.18.96.300" is not an IP address');
    expect(reasonOf(service('fam', { clusterIPs: ['2001:db8::1'], ipFamilies: ['IPv4'] }))).toMatch(/^ns\/fam: spec\.clusterIPs\[0\]: 2001:db8::1 is not an IPv4 address/);
    expect(reasonOf(service('p0', { ...ok, ports: [{ name: 'a', port: 0 }] }))).toBe('ns/p0: spec.ports[0].port: 0 is out of range (1-65535)');
    expect(reasonOf(service('p7', { ...ok, ports: [{ name: 'a', port: 80 }, { name: 'b', port: 70000 }] }))).toBe(
      'ns/p7: spec.ports[1].port: 70000 is out of range (1-65535)',
    );
    expect(reasonOf(service('proto', { ...ok, ports: [{ name: 'a', port: 80, protocol: 'ICMP' }] }))).toBe(
      'ns/proto: spec.ports[0].protocol: unsupported protocol "ICMP" (TCP, UDP or SCTP)',
    );
    expect(reasonOf(service('dup', { ...ok, ports: [{ name: 'a', port: 80 }, { name: 'b', port: 80, protocol: 'TCP' }] }))).toBe(
      'ns/dup: spec.ports[1]: 80/TCP duplicates spec.ports[0]',
    );
    expect(reasonOf(service('dupname', { ...ok, ports: [{ name: 'a', port: 80 }, { name: 'a', port: 81 }] }))).toBe(
      'ns/dupname: spec.ports[1].name: "a" duplicates spec.ports[0]',
    );
    expect(reasonOf(service('np', { type: 'NodePort', ...ok, ports: [{ name: 'a', port: 80, nodePort: 70000 }] }))).toMatch(/spec\.ports\[0\]\.nodePort: 70000 is out of range/);
    expect(reasonOf(service('ext', { ...ok, externalIPs: ['198.19.100.1', 'nope'] }))).toBe('ns/ext: spec.externalIPs[1]: "nope" is not an IP address');
    expect(reasonOf(service('lbip', ok, { status: { loadBalancer: { ingress: [{ ip: '1.2.3' }] } } }))).toMatch(/status\.loadBalancer\.ingress\[0\]\.ip: "1\.2\.3" is not an IP address/);
    expect(reasonOf(service('range', { ...ok, loadBalancerSourceRanges: ['198.18.0.0/33'] }))).toMatch(/spec\.loadBalancerSourceRanges\[0\]: "198\.18\.0\.0\/33" is not a CIDR/);
    expect(reasonOf(service('aff', { ...ok, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 86401 } } }))).toMatch(
      /timeoutSeconds: 86401 is out of range \(1-86400\)/,
    );
    expect(reasonOf(service('etp', { ...ok, externalTrafficPolicy: 'Global' }))).toMatch(/spec\.externalTrafficPolicy: unknown policy "Global"/);
    expect(reasonOf(service('type', { ...ok, type: 'Magic' }))).toMatch(/spec\.type: unknown type "Magic"/);
    expect(reasonOf({ metadata: { namespace: 'ns' }, spec: ok })).toBe('ns/<no name>: metadata.name: missing');
    expect(reasonOf({ metadata: { namespace: 'n'.repeat(64), name: 'x' }, spec: ok })).toMatch(/metadata\.namespace: 64 characters, more than 63/);
  });
});

describe('EndpointSlices', () => {
  const web = portsOf(service('web', { clusterIP: '198.18.96.10' }), 'ipv4');

  it('merges two slices: de-duplicated (the ready copy wins), in kube-proxy\'s order, local by node name', () => {
    const a = slice('web-b', 'web', 'IPv4', [ep('198.18.0.10', {}, 'node-1'), ep('198.18.0.2', { ready: false, serving: false }, 'node-2')]);
    const b = slice('web-a', 'web', 'IPv4', [ep('198.18.0.9', { ready: false }), ep('198.18.0.2', { ready: true }, 'node-2')]);
    const merged = mergeEndpoints(web, [sliceInfo(a), sliceInfo(b)], 'node-1')[0]!;
    // kube-proxy sorts by "ip:port" as text (byEndpoint), not by address: .10 before .2 before .9.
    expect(merged.map((e) => `${e.ip}:${e.port} ready=${e.ready} local=${e.isLocal}`)).toEqual([
      '198.18.0.10:8080 ready=true local=true',
      '198.18.0.2:8080 ready=true local=false',
      '198.18.0.9:8080 ready=false local=false',
    ]);
    // IPv6 as net.JoinHostPort writes it: "[2001:db8::10]:8080" < "[2001:db8::1]:8080" (']' sorts after '0').
    const v6 = slice('web-6', 'web', 'IPv6', [ep('2001:db8::1'), ep('2001:db8::10'), ep('2001:db8::9')]);
    const web6 = portsOf(service('web', { clusterIP: '2001:db8:96::10', ipFamilies: ['IPv6'] }), 'ipv6');
    expect(mergeEndpoints(web6, [sliceInfo(v6)], '')[0]!.map((e) => e.ip)).toEqual(['2001:db8::10', '2001:db8::1', '2001:db8::9']);
  });

  it('conditions default as kube-proxy: ready and serving true, terminating false', () => {
    const merged = mergeEndpoints(web, [sliceInfo(slice('s', 'web', 'IPv4', [{ addresses: ['198.18.0.1'] }]))], '')[0]!;
    expect(merged[0]).toEqual({ ip: '198.18.0.1', port: 8080, ready: true, serving: true, terminating: false, isLocal: false });
  });

  it('slice ports bind by name and protocol; ports of other services and families get nothing', () => {
    const s = slice('s', 'web', 'IPv4', [ep('198.18.0.1')], [
      { name: 'http', port: 8080, protocol: 'UDP' },
      { name: 'other', port: 9, protocol: 'TCP' },
    ]);
    expect(mergeEndpoints(web, [sliceInfo(s)], '')[0]).toEqual([]);
    const v6 = sliceInfo(slice('s6', 'web', 'IPv6', [ep('2001:db8::1')]));
    expect(mergeEndpoints(web, [v6], '')[0]).toEqual([]);
  });

  it('rejects a slice whose addresses do not match its addressType, an endpoint without addresses, a bad port', () => {
    const reason = (s: EndpointSlice): string => {
      const r = readEndpointSlice(s);
      if (!('invalid' in r)) throw new Error('expected invalid');
      return `${r.invalid.kind} ${r.invalid.ref}: ${r.invalid.reason}`;
    };
    expect(reason(slice('mix', 'web', 'IPv6', [ep('198.18.0.1')]))).toBe(
      'EndpointSlice ns/mix: endpoints[0].addresses[0]: "198.18.0.1" is not an IPv6 address (addressType IPv6)',
    );
    expect(reason(slice('empty', 'web', 'IPv4', [{ addresses: [] }]))).toBe('EndpointSlice ns/empty: endpoints[0].addresses: empty');
    expect(reason(slice('port', 'web', 'IPv4', [ep('198.18.0.1')], [{ name: 'http', port: 0, protocol: 'TCP' }]))).toMatch(/ports\[0\]\.port: 0 is out of range/);
    expect(reason({ ...slice('nolabel', 'web', 'IPv4', []), metadata: { namespace: 'ns', name: 'nolabel' } })).toMatch(/kubernetes\.io\/service-name\]: missing/);
    expect(readEndpointSlice(slice('fqdn', 'web', 'FQDN', [{ addresses: ['a.example'] }]))).toEqual({ skipped: 'addressType FQDN' });
  });
});

describe('topology hints (mergeEndpoints, then categorizeEndpoints)', () => {
  const web = portsOf(service('web', { clusterIP: '198.18.96.10' }), 'ipv4');
  const hinted = (ip: string, zones: string[] | undefined, extra: Partial<Endpoint> = {}): Endpoint => ({
    addresses: [ip],
    nodeName: 'node-2',
    ...(zones ? { hints: { forZones: zones.map((name) => ({ name })) } } : {}),
    ...extra,
  });
  const merge = (eps: Endpoint[], zone: string, sp = web) => mergeEndpoints(sp, [sliceInfo(slice('s', 'web', 'IPv4', eps))], 'node-1', zone)[0]!;
  const cluster = (eps: Endpoint[], zone: string, sp = web) => categorizeEndpoints(merge(eps, zone, sp), sp[0]!).clusterEndpoints.map((x) => x.ip);

  it('a not-ready endpoint without hints does not turn them off; an unlabelled node ignores zone hints', () => {
    const eps = [hinted('198.18.0.1', ['a']), hinted('198.18.0.2', ['b']), hinted('198.18.0.3', undefined, { conditions: { ready: false } })];
    expect(cluster(eps, 'a')).toEqual(['198.18.0.1']);
    expect(cluster(eps, '')).toEqual(['198.18.0.1', '198.18.0.2']);
  });

  it('Local policy ignores hints; what Local reaches stays reachable', () => {
    const svc = portsOf(service('web', { clusterIP: '198.18.96.10', type: 'NodePort', externalTrafficPolicy: 'Local' }), 'ipv4');
    const eps = [hinted('198.18.0.1', ['a']), hinted('198.18.0.2', ['b'], { nodeName: 'node-1' })];
    const c = categorizeEndpoints(merge(eps, 'a', svc), svc[0]!);
    expect(c.clusterEndpoints.map((x) => x.ip)).toEqual(['198.18.0.1']);
    expect(c.localEndpoints.map((x) => x.ip)).toEqual(['198.18.0.2']);
    expect(c.allReachableEndpoints.map((x) => x.ip)).toEqual(['198.18.0.1', '198.18.0.2']);
  });

  it('a hint without a name makes the slice invalid, naming the field', () => {
    const r = readEndpointSlice(slice('bad', 'web', 'IPv4', [{ addresses: ['198.18.0.1'], hints: { forZones: [{}] } }]));
    expect('invalid' in r && `${r.invalid.ref}: ${r.invalid.reason}`).toBe('ns/bad: endpoints[0].hints.forZones[0].name: missing');
  });
});

describe('categorizeEndpoints', () => {
  const base = portsOf(service('web', { clusterIP: '198.18.96.10' }), 'ipv4')[0]!;
  const e = (ip: string, ready: boolean, terminating: boolean, isLocal = false, serving = ready || terminating): ServiceEndpoint => ({
    ip,
    port: 80,
    ready,
    serving,
    terminating,
    isLocal,
  });
  const ips = (list: readonly ServiceEndpoint[]): string[] => list.map((x) => x.ip);

  it('ready endpoints only; serving terminating ones when none is ready', () => {
    const ready = e('198.18.0.1', true, false);
    const draining = e('198.18.0.2', false, true);
    const dead = e('198.18.0.3', false, true, false, false);
    expect(ips(categorizeEndpoints([ready, draining, dead], base).clusterEndpoints)).toEqual(['198.18.0.1']);
    const fallback = categorizeEndpoints([draining, dead], base);
    expect(ips(fallback.clusterEndpoints)).toEqual(['198.18.0.2']);
    expect(fallback.hasAnyEndpoints).toBe(true);
    expect(categorizeEndpoints([dead], base).hasAnyEndpoints).toBe(false);
    expect(categorizeEndpoints([ready], base).localEndpoints).toEqual([]);
  });

  it('ETP Local: local endpoints with their own fallback, reachable = cluster ∪ local', () => {
    const sp: ServicePort = { ...base, external: true, externalTrafficPolicy: 'Local' };
    const remote = e('198.18.0.1', true, false);
    const localDraining = e('198.18.0.2', false, true, true);
    const c = categorizeEndpoints([remote, localDraining], sp);
    expect(ips(c.clusterEndpoints)).toEqual(['198.18.0.1']);
    expect(ips(c.localEndpoints)).toEqual(['198.18.0.2']);
    expect(ips(c.allReachableEndpoints)).toEqual(['198.18.0.1', '198.18.0.2']);
    expect(c.hasAnyEndpoints).toBe(true);
  });

  it('ITP Local and ETP Local on an external service: cluster endpoints still, for pods and the node (kube-proxy short-circuits them)', () => {
    const sp: ServicePort = { ...base, external: true, externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local' };
    const remote = e('198.18.0.1', true, false);
    const local = e('198.18.0.2', true, false, true);
    const c = categorizeEndpoints([remote, local], sp);
    expect(ips(c.clusterEndpoints)).toEqual(['198.18.0.1', '198.18.0.2']);
    expect(ips(c.localEndpoints)).toEqual(['198.18.0.2']);
    expect(ips(c.allReachableEndpoints)).toEqual(['198.18.0.1', '198.18.0.2']);
  });

  it('ITP Local on an internal service: no cluster endpoints, hasAny from remote ones', () => {
    const sp: ServicePort = { ...base, internalTrafficPolicy: 'Local' };
    const c = categorizeEndpoints([e('198.18.0.1', true, false)], sp);
    expect(c).toEqual({ clusterEndpoints: [], localEndpoints: [], allReachableEndpoints: [], hasAnyEndpoints: true });
  });
});

describe('ChangeTracker', () => {
  it('builds both families of a dual-stack service, and reports an invalid object once per version', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    t.service('add', service('dual', { clusterIPs: ['198.18.96.1', '2001:db8::1'], ipFamilies: ['IPv4', 'IPv6'] }));
    t.service('add', service('bad', { clusterIP: '198.18.96.2', ports: [{ name: 'x', port: 70000 }] }), '1');
    t.endpointSlice('add', slice('dual-4', 'dual', 'IPv4', [ep('198.18.0.1', {}, 'node-1')]));
    t.endpointSlice('add', slice('dual-6', 'dual', 'IPv6', [ep('2001:db8::a')]));
    t.endpointSlice('add', slice('dual-bad', 'dual', 'IPv4', [ep('2001:db8::b')]));
    expect(t.pendingChanges()).toMatchObject({ services: 2, endpoints: 1 });
    expect(t.pendingChanges().oldestQueuedAt).toBeTypeOf('number');

    const first = t.snapshot();
    expect([...first.states.ipv4.services.keys()]).toEqual(['ns/dual:http']);
    expect(first.states.ipv4.endpoints.get('ns/dual:http')).toMatchObject([{ ip: '198.18.0.1', isLocal: true }]);
    expect(first.states.ipv6.endpoints.get('ns/dual:http')).toMatchObject([{ ip: '2001:db8::a', isLocal: false }]);
    expect(first.invalid.map((i) => `${i.kind} ${i.ref}`).sort()).toEqual(['EndpointSlice ns/dual-bad', 'Service ns/bad']);
    expect([...first.change.ipv4.changedServices]).toEqual(['ns/dual:http']);
    expect(t.pendingChanges()).toEqual({ services: 0, endpoints: 0, oldestQueuedAt: undefined });

    // The same version again (a resync) changes nothing and is not reported again.
    t.service('update', service('bad', { clusterIP: '198.18.96.2', ports: [{ name: 'x', port: 70000 }] }), '1');
    expect(t.pendingChanges().services).toBe(0);
    const second = t.snapshot();
    expect(second.invalid).toEqual([]);
    expect(second.states.ipv4).toBe(first.states.ipv4);
    // A new version of the bad object is reported again.
    t.service('update', service('bad', { clusterIP: '198.18.96.2', ports: [{ name: 'x', port: 0 }] }), '2');
    expect(t.snapshot().invalid).toMatchObject([{ ref: 'ns/bad', reason: 'spec.ports[0].port: 0 is out of range (1-65535)' }]);
  });

  it('follows slices as they come, go and move between services', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    t.service('add', service('a', { clusterIP: '198.18.96.1' }));
    t.service('add', service('b', { clusterIP: '198.18.96.2' }));
    t.endpointSlice('add', slice('a-1', 'a', 'IPv4', [ep('198.18.0.1')]));
    t.endpointSlice('add', slice('a-2', 'a', 'IPv4', [ep('198.18.0.2')]));
    t.endpointSlice('add', slice('a-3', 'a', 'IPv4', [ep('198.18.0.3')]));
    const ips = (s: ReturnType<typeof t.snapshot>, id: string) => (s.states.ipv4.endpoints.get(id) ?? []).map((e) => e.ip);
    expect(ips(t.snapshot(), 'ns/a:http')).toEqual(['198.18.0.1', '198.18.0.2', '198.18.0.3']);
    t.endpointSlice('delete', slice('a-2', 'a', 'IPv4', [ep('198.18.0.2')]));
    t.endpointSlice('delete', slice('a-1', 'a', 'IPv4', [ep('198.18.0.1')]));
    expect(ips(t.snapshot(), 'ns/a:http')).toEqual(['198.18.0.3']);
    // The last slice of a moves to b (its service label changed).
    t.endpointSlice('update', slice('a-3', 'b', 'IPv4', [ep('198.18.0.3')]));
    const moved = t.snapshot();
    expect(ips(moved, 'ns/a:http')).toEqual([]);
    expect(ips(moved, 'ns/b:http')).toEqual(['198.18.0.3']);
    t.endpointSlice('add', slice('a-1', 'a', 'IPv4', [ep('198.18.0.1')]));
    t.endpointSlice('delete', slice('a-3', 'b', 'IPv4', [ep('198.18.0.3')]));
    const last = t.snapshot();
    expect(ips(last, 'ns/a:http')).toEqual(['198.18.0.1']);
    expect(ips(last, 'ns/b:http')).toEqual([]);
  });

  it('follows a slice updated in place: each version\'s endpoints, addresses shifted or replaced, none once deleted', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    t.service('add', service('a', { clusterIP: '198.18.96.1' }));
    t.endpointSlice('add', slice('a-1', 'a', 'IPv4', [ep('198.18.0.1'), ep('198.18.0.2'), ep('198.18.0.3')]), '1');
    t.endpointSlice('add', slice('a-2', 'a', 'IPv4', [ep('198.18.0.9')]), '1');
    const ips = (s: ReturnType<typeof t.snapshot>) => (s.states.ipv4.endpoints.get('ns/a:http') ?? []).map((e) => e.ip);
    expect(ips(t.snapshot())).toEqual(['198.18.0.1', '198.18.0.2', '198.18.0.3', '198.18.0.9']);
    // The first address goes (the others shift down by one), then one is replaced, then one is added in front.
    t.endpointSlice('update', slice('a-1', 'a', 'IPv4', [ep('198.18.0.2'), ep('198.18.0.3')]), '2');
    expect(ips(t.snapshot())).toEqual(['198.18.0.2', '198.18.0.3', '198.18.0.9']);
    t.endpointSlice('update', slice('a-1', 'a', 'IPv4', [ep('198.18.0.2'), ep('198.18.0.4')]), '3');
    expect(ips(t.snapshot())).toEqual(['198.18.0.2', '198.18.0.4', '198.18.0.9']);
    t.endpointSlice('update', slice('a-1', 'a', 'IPv4', [ep('198.18.0.5'), ep('198.18.0.2'), ep('198.18.0.4')]), '4');
    expect(ips(t.snapshot())).toEqual(['198.18.0.2', '198.18.0.4', '198.18.0.5', '198.18.0.9']);
    // A resync (the same version) changes nothing; the slice then still belongs to its service.
    t.endpointSlice('update', slice('a-1', 'a', 'IPv4', [ep('198.18.0.5'), ep('198.18.0.2'), ep('198.18.0.4')]), '4');
    expect(t.snapshot().change.ipv4.changedEndpoints.size).toBe(0);
    t.endpointSlice('delete', slice('a-2', 'a', 'IPv4', [ep('198.18.0.9')]), '5');
    expect(ips(t.snapshot())).toEqual(['198.18.0.2', '198.18.0.4', '198.18.0.5']);
    t.endpointSlice('delete', slice('a-1', 'a', 'IPv4', [ep('198.18.0.5'), ep('198.18.0.2'), ep('198.18.0.4')]), '6');
    expect(ips(t.snapshot())).toEqual([]);
  });

  it('a service that leaves a family is removed from it, and its address there is free for another', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    t.service('add', service('dual', { clusterIPs: ['198.18.96.1', '2001:db8::1'], ipFamilies: ['IPv4', 'IPv6'] }, { metadata: { name: 'dual', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' } }));
    t.service('add', service('later', { clusterIPs: ['2001:db8::1'], ipFamilies: ['IPv6'] }, { metadata: { name: 'later', namespace: 'ns', creationTimestamp: '2026-01-02T00:00:00Z' } }));
    const first = t.snapshot();
    // The older service holds 2001:db8::1 port 80; the later one loses it.
    expect([...first.states.ipv6.services.keys()]).toEqual(['ns/dual:http']);
    t.service('update', service('dual', { clusterIPs: ['198.18.96.1'], ipFamilies: ['IPv4'] }, { metadata: { name: 'dual', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' } }));
    const second = t.snapshot();
    expect([...second.change.ipv6.removed]).toEqual(['ns/dual:http']);
    expect([...second.states.ipv6.services.keys()]).toEqual(['ns/later:http']);
    expect([...second.states.ipv4.services.keys()]).toEqual(['ns/dual:http']);
    expect(second.change.ipv4.removed.size).toBe(0);
  });

  it('keeps the indexes of the Local-policy and the UDP/SCTP service ports as services come, change and go', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    const ports = [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'http', port: 80, protocol: 'TCP' },
    ];
    t.service('add', service('local', { clusterIP: '198.18.96.1', internalTrafficPolicy: 'Local', ports }));
    t.service('add', service('lb', { clusterIP: '198.18.96.2', type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30999, ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] }));
    t.service('add', service('plain', { clusterIP: '198.18.96.3', ports: [{ name: 'sctp', port: 99, protocol: 'SCTP' }] }));
    const indexes = () => {
      const st = t.snapshot().states.ipv4;
      return { local: [...st.localPolicyPorts!].sort(), flows: [...st.flowCleanedPorts!].sort() };
    };
    expect(indexes()).toEqual({ local: ['ns/lb:http', 'ns/local:dns', 'ns/local:http'], flows: ['ns/local:dns', 'ns/plain:sctp'] });
    // Cluster policy now, one port fewer; the SCTP service goes.
    t.service('update', service('local', { clusterIP: '198.18.96.1', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] }));
    t.service('delete', service('plain', { clusterIP: '198.18.96.3' }));
    expect(indexes()).toEqual({ local: ['ns/lb:http'], flows: ['ns/local:dns'] });
    // TCP now: out of the flow index.
    t.service('update', service('local', { clusterIP: '198.18.96.1', ports: [{ name: 'dns', port: 53, protocol: 'TCP' }] }));
    t.service('delete', service('lb', { clusterIP: '198.18.96.2' }));
    expect(indexes()).toEqual({ local: [], flows: [] });
  });

  it('without versions (manifest files), the same objects again are compared by what they build: no change, no new state', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    const svc = (): Service => service('web', { clusterIP: '198.18.96.1' });
    const eps = (addr: string): EndpointSlice => slice('web-1', 'web', 'IPv4', [ep(addr)]);
    t.service('add', svc());
    t.endpointSlice('add', eps('198.18.0.1'));
    const first = t.snapshot();
    t.service('update', svc());
    t.endpointSlice('update', eps('198.18.0.1'));
    expect(t.pendingChanges()).toMatchObject({ services: 1, endpoints: 1 });
    const same = t.snapshot();
    expect([...same.change.ipv4.changedServices, ...same.change.ipv4.changedEndpoints, ...same.change.ipv4.removed]).toEqual([]);
    expect(same.states.ipv4.endpoints.get('ns/web:http')).toEqual(first.states.ipv4.endpoints.get('ns/web:http'));
    t.endpointSlice('update', eps('198.18.0.2'));
    expect([...t.snapshot().change.ipv4.changedEndpoints]).toEqual(['ns/web:http']);
  });

  it('a changed endpoint marks only that service\'s ports; removals are reported', () => {
    const t = new ChangeTracker({ nodeName: 'node-1' });
    t.service('add', service('a', { clusterIP: '198.18.96.1', ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] }));
    t.service('add', service('b', { clusterIP: '198.18.96.2' }));
    t.endpointSlice('add', slice('a-1', 'a', 'IPv4', [ep('198.18.0.1')]));
    t.endpointSlice('add', slice('b-1', 'b', 'IPv4', [ep('198.18.0.2')]));
    const s0 = t.snapshot();
    const a0 = s0.states.ipv4.endpoints.get('ns/a:http');
    const b0 = s0.states.ipv4.endpoints.get('ns/b:http');

    t.endpointSlice('update', slice('a-1', 'a', 'IPv4', [ep('198.18.0.1'), ep('198.18.0.3')]));
    const s1 = t.snapshot();
    expect([...s1.change.ipv4.changedEndpoints]).toEqual(['ns/a:http']);
    expect([...s1.change.ipv4.changedServices]).toEqual([]);
    // One state, updated in place: the changed port's list is replaced (not changed), the others kept.
    expect(s1.states.ipv4).toBe(s0.states.ipv4);
    expect(a0).toHaveLength(1);
    expect(s1.states.ipv4.endpoints.get('ns/a:http')).toHaveLength(2);
    expect(s1.states.ipv4.endpoints.get('ns/b:http')).toBe(b0);

    t.service('update', service('a', { clusterIP: '198.18.96.1', ports: [{ name: 'http', port: 8080 }] }));
    const s2 = t.snapshot();
    expect([...s2.change.ipv4.changedServices]).toEqual(['ns/a:http']);
    expect([...s2.change.ipv4.removed]).toEqual(['ns/a:https']);
    expect(s2.states.ipv4.services.has('ns/a:https')).toBe(false);

    t.service('delete', service('b', { clusterIP: '198.18.96.2' }));
    const s3 = t.snapshot();
    expect([...s3.change.ipv4.removed]).toEqual(['ns/b:http']);
    expect([...s3.change.ipv4.changedEndpoints]).toEqual(['ns/b:http']);
    expect([...s3.states.ipv4.services.keys()]).toEqual(['ns/a:http']);
  });

  it('collects last-change-trigger-time of changed slices, newer than the tracker', () => {
    let now = Date.parse('2025-01-01T00:00:00Z');
    const t = new ChangeTracker({ nodeName: 'n', now: () => now });
    const s = slice('a-1', 'a', 'IPv4', [ep('198.18.0.1')]);
    s.metadata!.annotations = { 'endpoints.kubernetes.io/last-change-trigger-time': '2025-01-01T00:00:05Z' };
    const old = slice('a-2', 'a', 'IPv4', [ep('198.18.0.2')]);
    old.metadata!.annotations = { 'endpoints.kubernetes.io/last-change-trigger-time': '2024-12-31T00:00:00Z' };
    now += 10_000;
    t.endpointSlice('add', s);
    t.endpointSlice('add', old);
    const snap = t.snapshot();
    expect(snap.lastChangeTriggerTimes).toEqual([Date.parse('2025-01-01T00:00:05Z')]);
    expect(snap.queuedSince).toBe(now);
    expect(t.snapshot().lastChangeTriggerTimes).toEqual([]);
  });
});
