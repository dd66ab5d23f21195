// Stale UDP conntrack flows (src/proxy/conntrack): real datagrams from a fixed client port, so one
// conntrack flow pins the client to one endpoint; after the endpoint leaves the EndpointSlice, the sync
// deletes that flow and the next datagram from the same port reaches another endpoint. And the 0 -> N
// case: a flow made before the service had endpoints (not DNAT'ed) is deleted once it has some.
// Flows are checked with conntrack(8) in the node's namespace. Kernel test: fails without root.

import { describe, expect, it } from 'vitest';
import type { Netns } from '../../../src/netns/netns.js';
import { loadNative } from '../../../src/native/binding.js';
import { flowBaseline, staleFlowFilters } from '../../../src/proxy/conntrack/stale.js';
import type { ProxyState, ServiceEndpoint, ServicePort } from '../../../src/proxy/model/types.js';
import { proxyClusterFor, service, slice, wroteSomething } from './helpers.js';

/** One datagram from a fixed source port; prints the answering pod or error:<why>. */
const SEND = `
const [host, port, sport, timeout] = process.argv.slice(1);
const s = require('dgram').createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: true });
const end = (a) => { console.log(a); s.close(); };
const timer = setTimeout(() => end('error:timeout'), Number(timeout));
s.on('message', (m) => { clearTimeout(timer); end(JSON.parse(m).pod); });
s.on('error', (e) => { clearTimeout(timer); end('error:' + e.code); });
s.bind(Number(sport), () => s.send('x', Number(port), host));
`;

function send(from: Netns, host: string, port: number, sport: number, timeoutMs = 1500): string {
  return from.exec(process.execPath, ['-e', SEND, host, String(port), String(sport), String(timeoutMs)]).trim();
}

interface Flow {
  origDst: string;
  origDport: number;
  replySrc: string;
}

/** The UDP flows conntrack(8) lists in `ns` whose original source port is `sport`. */
function flows(ns: Netns, sport: number): Flow[] {
  const out = ns.exec('conntrack', ['-L', '-f', 'ipv4', '-p', 'udp', '--sport', String(sport)]);
  return out
    .split('\n')
    .filter((l) => l.startsWith('udp'))
    .map((l) => {
      const src = [...l.matchAll(/src=(\S+)/g)].map((m) => m[1]!);
      const dst = [...l.matchAll(/dst=(\S+)/g)].map((m) => m[1]!);
      const dport = [...l.matchAll(/dport=(\d+)/g)].map((m) => Number(m[1]));
      return { origDst: dst[0]!, origDport: dport[0]!, replySrc: src[1]! };
    });
}

const UDP = [{ name: 'dns', protocol: 'UDP' as const, port: 53, targetPort: 8080 }];
const UDP_SLICE = [{ name: 'dns', protocol: 'UDP' as const, port: 8080 }];

describe('UDP conntrack cleanup', () => {
  const t = proxyClusterFor({
    pods: 2,
    prefix: 'nlp-ct',
    write: (dir, c) =>
      dir.write(
        'dns',
        service({ name: 'dns', clusterIPs: ['198.18.200.60'], ports: UDP }),
        slice({ service: 'dns', ports: UDP_SLICE, endpoints: c.pods.map((p) => p.ipv4) }),
      ),
    timeoutMs: 30_000,
  });

  it('deletes the flows pinned to a removed endpoint, so the next datagram reaches another one', async () => {
    const sport = 40_000;
    const first = send(t.c.client, '198.18.200.60', 53, sport);
    expect(first).toMatch(/^pod[01]$/);
    // The flow pins this client port: every datagram goes to the same pod.
    for (let i = 0; i < 5; i++) expect(send(t.c.client, '198.18.200.60', 53, sport)).toBe(first);
    const a = t.c.pods.find((p) => p.name === first)!;
    const b = t.c.pods.find((p) => p.name !== first)!;
    expect(flows(t.c.node, sport)).toEqual([{ origDst: '198.18.200.60', origDport: 53, replySrc: a.ipv4 }]);
    // An unrelated UDP flow to the same service port from another client port, pinned to B, must survive.
    let other = 0;
    for (let p = 40_100; p < 40_140 && other === 0; p++) if (send(t.c.client, '198.18.200.60', 53, p) === b.name) other = p;
    expect(other).not.toBe(0);

    const synced = t.px.nextSync(wroteSomething);
    t.dir.write(
      'dns',
      service({ name: 'dns', clusterIPs: ['198.18.200.60'], ports: UDP }),
      slice({ service: 'dns', ports: UDP_SLICE, endpoints: [b.ipv4] }),
    );
    const report = await synced;
    expect(report.error).toBeUndefined();
    // A's server still runs: without the cleanup the flow would keep delivering to it.
    expect(flows(t.c.node, sport)).toEqual([]);
    expect(flows(t.c.node, other)).toEqual([{ origDst: '198.18.200.60', origDport: 53, replySrc: b.ipv4 }]);
    expect(send(t.c.client, '198.18.200.60', 53, sport)).toBe(b.name);
    expect(flows(t.c.node, sport)).toEqual([{ origDst: '198.18.200.60', origDport: 53, replySrc: b.ipv4 }]);
    expect(t.px.log.records.filter((r) => r.level === 'error')).toEqual([]);
  }, 30_000);

  it('deletes flows made while a service port had no endpoints once it has some (0 -> N)', async () => {
    const sport = 41_000;
    const ext = '198.19.100.61';
    const late = (endpoints: string[]) => [
      service({ name: 'late', clusterIPs: ['198.18.200.61'], externalIPs: [ext], ports: UDP }),
      slice({ service: 'late', ports: UDP_SLICE, endpoints }),
    ];
    // Before the service has this external IP the node just routes the datagram (to its default route):
    // a flow that is not DNAT'ed, which would keep the client's later datagrams away from the endpoints.
    expect(send(t.c.client, ext, 53, sport, 300)).toBe('error:timeout');
    expect(flows(t.c.node, sport)).toEqual([{ origDst: ext, origDport: 53, replySrc: ext }]);
    // And a flow to the same address on a port that is no service port: left alone.
    expect(send(t.c.client, ext, 54, sport, 300)).toBe('error:timeout');

    let synced = t.px.nextSync(wroteSomething);
    t.dir.write('late', ...late([]));
    expect((await synced).error).toBeUndefined();
    // No endpoints yet: nothing is cleaned.
    expect(flows(t.c.node, sport).filter((f) => f.origDport === 53)).toHaveLength(1);

    synced = t.px.nextSync(wroteSomething);
    t.dir.write('late', ...late([t.c.pods[0]!.ipv4]));
    expect((await synced).error).toBeUndefined();
    expect(flows(t.c.node, sport)).toEqual([{ origDst: ext, origDport: 54, replySrc: ext }]);
    expect(send(t.c.client, ext, 53, sport)).toBe(t.c.pods[0]!.name);
    expect(flows(t.c.node, sport).filter((f) => f.origDport === 53)).toEqual([{ origDst: ext, origDport: 53, replySrc: t.c.pods[0]!.ipv4 }]);
  }, 30_000);

  it('conntrackDelete refuses bad filters and reports what it deleted', async () => {
    const native = loadNative();
    const h = native.open(t.c.node.name);
    try {
      await expect(native.conntrackDelete(h, 2, [{ protocol: 17, dstPort: 0 }])).rejects.toThrow(/dstPort/);
      await expect(native.conntrackDelete(h, 2, [{ protocol: 17, dstPort: 53, dst: '2001:db8::1' }])).rejects.toThrow(/dst/);
      await expect(native.conntrackDelete(h, 3 as 2, [])).rejects.toThrow(/family/);
      expect(await native.conntrackDelete(h, 2, [])).toMatchObject({ deleted: 0, failed: 0 });
      // The flow left by the previous test, by its exact tuple.
      const r = await native.conntrackDelete(h, 2, [{ protocol: 17, dst: '198.19.100.61', dstPort: 54, notNatted: true }]);
      expect(r).toMatchObject({ deleted: 1, failed: 0, errors: [] });
      expect(r.scanned).toBeGreaterThanOrEqual(1);
      expect(flows(t.c.node, 41_000).filter((f) => f.origDport === 54)).toEqual([]);
    } finally {
      native.close(h);
    }
  });
});

describe('staleFlowFilters', () => {
  const sp = (over: Partial<ServicePort> = {}): ServicePort => ({
    id: 'default/dns:dns', namespace: 'default', name: 'dns', portName: 'dns', protocol: 'UDP', family: 'ipv4',
    clusterIP: '198.18.200.10', port: 53, nodePort: 30053, externalIPs: ['198.19.50.1'], loadBalancerIPs: [], loadBalancerSourceRanges: [],
    externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', affinityTimeoutSeconds: 0, healthCheckNodePort: 0, external: true,
    ...over,
  });
  const ep = (ip: string, over: Partial<ServiceEndpoint> = {}): ServiceEndpoint => ({ ip, port: 8080, ready: true, serving: true, terminating: false, isLocal: true, ...over });
  const state = (ports: [ServicePort, ServiceEndpoint[]][]): ProxyState => ({
    family: 'ipv4',
    services: new Map(ports.map(([p]) => [p.id, p])),
    endpoints: new Map(ports.map(([p, e]) => [p.id, e])),
  });

  it('selects the flows of a removed endpoint: service addresses and NodePort, reply source the endpoint', () => {
    const r = staleFlowFilters(flowBaseline(state([[sp(), [ep('198.18.1.1'), ep('198.18.1.2')]]])), state([[sp(), [ep('198.18.1.2')]]]));
    expect(r.filters).toEqual([
      { protocol: 17, dst: '198.18.200.10', dstPort: 53, replySrc: '198.18.1.1' },
      { protocol: 17, dst: '198.19.50.1', dstPort: 53, replySrc: '198.18.1.1' },
      { protocol: 17, dstPort: 30053, replySrc: '198.18.1.1' },
    ]);
    expect(r).toMatchObject({ staleEndpoints: 1, newlyActive: 0 });
  });

  it('treats an endpoint that stopped being usable, and a removed service port, as gone', () => {
    const before = flowBaseline(state([[sp({ nodePort: 0, externalIPs: [] }), [ep('198.18.1.1'), ep('198.18.1.2')]]]));
    const r = staleFlowFilters(before, state([[sp({ nodePort: 0, externalIPs: [] }), [ep('198.18.1.1', { ready: false, serving: false }), ep('198.18.1.2')]]]));
    expect(r.filters).toEqual([{ protocol: 17, dst: '198.18.200.10', dstPort: 53, replySrc: '198.18.1.1' }]);
    expect(staleFlowFilters(before, state([])).filters).toHaveLength(2);
  });

  it('clears every flow to a port that goes from no endpoints to some; nothing for TCP', () => {
    const r = staleFlowFilters(flowBaseline(state([[sp({ externalIPs: [] }), []]])), state([[sp({ externalIPs: [] }), [ep('198.18.1.1')]]]));
    expect(r.filters).toEqual([{ protocol: 17, dst: '198.18.200.10', dstPort: 53 }, { protocol: 17, dstPort: 30053 }]);
    expect(staleFlowFilters(flowBaseline(state([])), state([[sp({ protocol: 'TCP' }), [ep('198.18.1.1')]]])).filters).toEqual([]);
    expect(staleFlowFilters(flowBaseline(state([[sp({ protocol: 'TCP' }), [ep('198.18.1.1')]]])), state([])).filters).toEqual([]);
  });

  it('without a baseline deletes only flows that were never DNAT\'ed, for ports with endpoints', () => {
    const r = staleFlowFilters(undefined, state([[sp(), [ep('198.18.1.1')]], [sp({ id: 'default/x:', clusterIP: '10.0.0.11' }), []]]));
    expect(r.filters).toEqual([
      { protocol: 17, dst: '198.18.200.10', dstPort: 53, notNatted: true },
      { protocol: 17, dst: '198.19.50.1', dstPort: 53, notNatted: true },
    ]);
  });
});
