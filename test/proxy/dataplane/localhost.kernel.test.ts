// The localhost NodePort proxy, with real traffic: `nftlink proxy` runs inside the node namespace
// (its listeners must be on that namespace's loopback), clients connect to 127.0.0.1:<nodePort>.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';

import { probe, tally, type Cluster } from '../../../src/netns/cluster.js';
import { ProxyProcess } from '../../../src/netns/proxy-process.js';
import { CLUSTER, expectEvenSpread, ManifestDir, service, slice, sleep, startCluster } from './helpers.js';

const NODE_PORT = 30080;

let c: Cluster;
let dir: ManifestDir;
let proxy: ProxyProcess;
let blocker: ChildProcess;

function write(endpoints: number, opts: { affinity?: number; withUdp?: boolean; second?: boolean } = {}): void {
  const ports = [{ name: 'http', protocol: 'TCP' as const, port: 80, nodePort: NODE_PORT }];
  if (opts.withUdp) ports.push({ name: 'dns', protocol: 'UDP' as const, port: 53, nodePort: 30053 } as never);
  const svc = service({ name: 'web', type: 'NodePort', clusterIPs: ['198.18.200.20'], ports, ...(opts.affinity ? { affinitySeconds: opts.affinity } : {}) });
  const sl = slice({ service: 'web', ports: [{ name: 'http', protocol: 'TCP', port: 8080 }, { name: 'dns', protocol: 'UDP', port: 8080 }], endpoints: c.pods.slice(0, endpoints).map((p) => p.ipv4) });
  const objects: unknown[] = [svc, sl];
  // A second service whose NodePort is taken on loopback before the proxy starts.
  if (opts.second !== false) objects.push(service({ name: 'taken', type: 'NodePort', clusterIPs: ['198.18.200.21'], ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30081 }] }), slice({ service: 'taken', endpoints: [c.pods[0]!.ipv4] }));
  dir.write('services', ...objects);
}

async function until(check: () => boolean, what: string, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; proxy log:\n${proxy.raw}`);
    await sleep(100);
  }
}

const opened = (): number => proxy.raw.split('\n').filter((l) => l.includes('localhost NodePort listener opened') && l.includes(`"port":${NODE_PORT}`)).length;

beforeAll(async () => {
  c = await startCluster(3, 'nllh');
  dir = new ManifestDir();
  write(3, { withUdp: true });
  // Something else already listens on 127.0.0.1:30081 in the node namespace.
  blocker = c.node.spawn(process.execPath, ['-e', "require('net').createServer().listen(30081, '127.0.0.1', () => console.log('ready'))"]);
  await new Promise((r) => blocker.stdout!.once('data', r));
  proxy = ProxyProcess.start(c.node, ['--manifests', dir.path, '--node-name', 'node', '--node-ip', CLUSTER.nodeIPv4, '--cluster-cidr', CLUSTER.podCIDRv4, '--nodeport-addresses', `${CLUSTER.nodeIPv4}/32,127.0.0.1/32`, '--min-sync-period', '100ms', '-v', '4']);
  await until(() => opened() === 1, 'the localhost listener');
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  blocker?.kill();
  c?.remove();
  dir?.cleanup();
});

describe('localhost NodePorts', () => {
  it('HTTP through 127.0.0.1:<nodePort> reaches the endpoints, spread over all 3', () => {
    const t = tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 300 }));
    expect(Object.values(t).reduce((a, b) => a + b, 0)).toBe(300);
    expectEvenSpread(t, c.pods.map((p) => p.name));
  });

  it('a port already taken on loopback is a creation failure, and the rest keep working', async () => {
    const failuresNow = (): string[] => proxy.raw.split('\n').filter((l) => l.includes('cannot open localhost NodePort listener'));
    // The two listeners open concurrently: the failure may be logged after the other one opened.
    await until(() => failuresNow().length > 0, 'the failure of the taken port');
    const failures = failuresNow();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain('"port":30081');
    expect(metrics()).toMatch(/kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total\{ip_family="IPv4"\} 1/);
    expect(tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 5 }))).not.toHaveProperty('error:ECONNREFUSED');
  });

  it('a UDP datagram to a localhost NodePort is rejected, and the rule counts it', () => {
    const before = rejectedUdpCount();
    const p = probe(c.node, '127.0.0.1', 30053, { proto: 'udp', count: 3, timeoutMs: 500 });
    expect(p.answers.every((a) => a.startsWith('error:'))).toBe(true);
    expect(rejectedUdpCount() - before).toBe(3);
    const m = metrics();
    expect(m).toMatch(/kubeproxy_nftables_localhost_nodeport_rejected_packets_total\{protocol="udp"\} [1-9]/);
    expect(m).toMatch(/kubeproxy_nftables_localhost_nodeport_listeners\{ip_family="IPv4"\} 1/);
  });

  it('scaling moves traffic without reopening the listener', async () => {
    write(1, { withUdp: true });
    await until(() => Object.keys(tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 10 }))).length === 1, 'scale to 1');
    expect(tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 20 }))).toEqual({ [c.pods[0]!.name]: 20 });
    write(3, { withUdp: true });
    await until(() => Object.keys(tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 30 }))).length === 3, 'scale back to 3');
    expect(opened()).toBe(1);
  });

  it('ClientIP affinity pins one endpoint for every local client and renews with each connection', async () => {
    write(3, { affinity: 2, withUdp: true });
    await sleep(500);
    const first = tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 30 }));
    expect(Object.keys(first)).toHaveLength(1);
    // Connections 1 s apart keep renewing the 2 s window: still the same endpoint after 3 s.
    const pinned = Object.keys(first)[0]!;
    for (let i = 0; i < 3; i++) {
      await sleep(1000);
      expect(tally(probe(c.node, '127.0.0.1', NODE_PORT, { count: 1 }))).toEqual({ [pinned]: 1 });
    }
  });

  it('a NodePort that is removed closes its listener', async () => {
    dir.write('services');
    await until(() => probe(c.node, '127.0.0.1', NODE_PORT, { count: 1, timeoutMs: 500 }).answers[0] === 'error:ECONNREFUSED', 'the listener to close');
  });
});

/** The proxy's /metrics, scraped inside the node namespace (127.0.0.1:10249 there). */
function metrics(): string {
  return c.node.exec(process.execPath, ['-e', "require('http').get('http://127.0.0.1:10249/metrics', (r) => { let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => process.stdout.write(b)); })"]);
}

/** Packets the ruleset rejected on localhost UDP NodePorts (the counter of that rule). */
function rejectedUdpCount(): number {
  const out = c.node.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', 'filter-input']);
  const m = /counter packets (\d+) bytes \d+ reject comment "reject udp/.exec(out);
  return m ? Number(m[1]) : -1;
}


