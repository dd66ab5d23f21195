// A one-node "cluster" of network namespaces for the demo and the data-plane tests: a node that
// routes (where the proxy programs its tables), pods behind it on their own veth links, and a
// client outside the cluster. Every address is from 198.18.0.0/15 or 2001:db8::/32.
//
//   client 198.19.0.2 ── 198.19.0.1 node 198.18.<10+i>.1 ── 198.18.<10+i>.2 pod i
//          2001:db8:19::2    2001:db8:19::1    2001:db8:<10+i>::1    2001:db8:<10+i>::2

import { Netns } from './netns.js';

export interface Pod {
  ns: Netns;
  name: string;
  ipv4: string;
  ipv6: string;
  /** The pod's HTTP/UDP servers (started with servePod). */
  servers: import('node:child_process').ChildProcess[];
}

export interface Cluster {
  node: Netns;
  client: Netns;
  /** The node's address on the client link: where NodePorts answer. */
  nodeIPv4: string;
  nodeIPv6: string;
  clientIPv4: string;
  clientIPv6: string;
  /** All pod addresses live in these (the proxy's --cluster-cidr). */
  podCIDRv4: string;
  podCIDRv6: string;
  pods: Pod[];
  addPod(name?: string): Pod;
  remove(): void;
}

export const CLUSTER = {
  podCIDRv4: '198.18.0.0/16',
  podCIDRv6: '2001:db8:100::/40',
  serviceCIDRv4: '198.18.200.0/24',
  serviceCIDRv6: '2001:db8:200::/112',
  nodeIPv4: '198.19.0.1',
  nodeIPv6: '2001:db8:19::1',
  clientIPv4: '198.19.0.2',
  clientIPv6: '2001:db8:19::2',
};

/** Creates the node and the client; pods are added with addPod. */
export function createCluster(podCount: number, prefix = 'nftlink-c'): Cluster {
  const spaces: Netns[] = [];
  const make = (role: string): Netns => {
    const ns = Netns.create(`${prefix}-${role}`);
    spaces.push(ns);
    return ns;
  };
  try {
    const node = make('node');
    const client = make('client');
    node.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    node.exec('sysctl', ['-qw', 'net.ipv6.conf.all.forwarding=1']);
    node.link(client, { ifname: 'client', cidr: `${CLUSTER.nodeIPv4}/24` }, { ifname: 'eth0', cidr: `${CLUSTER.clientIPv4}/24` });
    node.exec('ip', ['-6', 'addr', 'add', `${CLUSTER.nodeIPv6}/64`, 'dev', 'client', 'nodad']);
    client.exec('ip', ['-6', 'addr', 'add', `${CLUSTER.clientIPv6}/64`, 'dev', 'eth0', 'nodad']);
    client.exec('ip', ['route', 'add', 'default', 'via', CLUSTER.nodeIPv4]);
    client.exec('ip', ['-6', 'route', 'add', 'default', 'via', CLUSTER.nodeIPv6]);
    // The node's "uplink" is the client link: a ClusterIP needs a route before DNAT picks the pod.
    node.exec('ip', ['route', 'add', 'default', 'via', CLUSTER.clientIPv4]);
    node.exec('ip', ['-6', 'route', 'add', 'default', 'via', CLUSTER.clientIPv6]);
    const pods: Pod[] = [];
    const cluster: Cluster = {
      node,
      client,
      nodeIPv4: CLUSTER.nodeIPv4,
      nodeIPv6: CLUSTER.nodeIPv6,
      clientIPv4: CLUSTER.clientIPv4,
      clientIPv6: CLUSTER.clientIPv6,
      podCIDRv4: CLUSTER.podCIDRv4,
      podCIDRv6: CLUSTER.podCIDRv6,
      pods,
      addPod(name?: string): Pod {
        const i = pods.length;
        if (i >= 200) throw new Error('at most 200 pods');
        const ns = make(`pod${i}`);
        const v4 = `198.18.${10 + i}`;
        const v6 = `2001:db8:1${(i + 10).toString(16).padStart(2, '0')}:`;
        node.link(ns, { ifname: `pod${i}`, cidr: `${v4}.1/24` }, { ifname: 'eth0', cidr: `${v4}.2/24` });
        node.exec('ip', ['-6', 'addr', 'add', `${v6}:1/64`, 'dev', `pod${i}`, 'nodad']);
        ns.exec('ip', ['-6', 'addr', 'add', `${v6}:2/64`, 'dev', 'eth0', 'nodad']);
        ns.exec('ip', ['route', 'add', 'default', 'via', `${v4}.1`]);
        ns.exec('ip', ['-6', 'route', 'add', 'default', 'via', `${v6}:1`]);
        const pod: Pod = { ns, name: name ?? `pod${i}`, ipv4: `${v4}.2`, ipv6: `${v6}:2`, servers: [] };
        pods.push(pod);
        return pod;
      },
      remove(): void {
        for (const ns of spaces.reverse()) ns.remove();
      },
    };
    for (let i = 0; i < podCount; i++) cluster.addPod();
    return cluster;
  } catch (err) {
    for (const ns of spaces) ns.remove();
    throw err;
  }
}

/** A TCP (HTTP) and a UDP echo server in the pod, answering with the pod's name and the peer's address. */
const SERVER = `
const [name, port] = [process.argv[1], Number(process.argv[2])];
const http = require('http'), dgram = require('dgram');
let pending = 3;
const ready = () => { if (--pending === 0) console.log('ready'); };
const handler = (req, res) => res.end(JSON.stringify({ pod: name, peer: req.socket.remoteAddress.replace(/^::ffff:/, '') }));
http.createServer(handler).listen(port, '0.0.0.0', ready);
const u4 = dgram.createSocket('udp4'); u4.on('message', (m, r) => u4.send(JSON.stringify({ pod: name, peer: r.address }), r.port, r.address)); u4.bind(port, ready);
const u6 = dgram.createSocket({ type: 'udp6', ipv6Only: true }); u6.on('message', (m, r) => u6.send(JSON.stringify({ pod: name, peer: r.address }), r.port, r.address)); u6.bind(port, ready);
http.createServer(handler).listen({ port, host: '::', ipv6Only: true });
`;

/** Starts the pod's servers on `port` (TCP over both families, UDP over both); resolves when listening. */
export function servePod(pod: Pod, port = 8080): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = pod.ns.spawn(process.execPath, ['-e', SERVER, pod.name, String(port)]);
    pod.servers.push(child);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`server in ${pod.name} exited (${code}): ${err}`)));
  });
}

export interface Probe {
  /** Which pod answered each attempt; 'error:<code>' when none did. */
  answers: string[];
  /** The client address each answering pod saw. */
  peers: string[];
  /** Milliseconds each attempt took. */
  times: number[];
}

/** HTTP GETs (or UDP datagrams) from inside a namespace, one after another, each on a new connection. */
const PROBE = `
const [proto, host, port, count, timeout, localAddress] = process.argv.slice(1);
const http = require('http'), dgram = require('dgram');
const one = () => new Promise((resolve) => {
  const t0 = Date.now();
  const done = (answer, peer) => resolve({ answer, peer, ms: Date.now() - t0 });
  if (proto === 'udp') {
    const s = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => { s.close(); done('error:timeout'); }, Number(timeout));
    s.on('message', (m) => { clearTimeout(timer); s.close(); const j = JSON.parse(m); done(j.pod, j.peer); });
    s.on('error', (e) => { clearTimeout(timer); s.close(); done('error:' + e.code); });
    s.send('x', Number(port), host);
    return;
  }
  const opts = { host, port: Number(port), path: '/', agent: false, timeout: Number(timeout) };
  if (localAddress) opts.localAddress = localAddress;
  const req = http.get(opts, (res) => {
    let body = ''; res.on('data', (d) => (body += d)); res.on('end', () => { try { const j = JSON.parse(body); done(j.pod, j.peer); } catch { done('error:body'); } });
  });
  req.on('timeout', () => { req.destroy(); done('error:timeout'); });
  req.on('error', (e) => done('error:' + (e.code || e.message)));
});
(async () => {
  const out = [];
  for (let i = 0; i < Number(count); i++) out.push(await one());
  console.log(JSON.stringify(out));
})();
`;

export interface ProbeOptions {
  proto?: 'tcp' | 'udp';
  count?: number;
  timeoutMs?: number;
  /** Source address to bind (for loadBalancerSourceRanges tests). */
  localAddress?: string;
}

export function probe(from: Netns, host: string, port: number, opts: ProbeOptions = {}): Probe {
  const out = from.exec(process.execPath, [
    '-e',
    PROBE,
    opts.proto ?? 'tcp',
    host,
    String(port),
    String(opts.count ?? 1),
    String(opts.timeoutMs ?? 2000),
    opts.localAddress ?? '',
  ]);
  const rows = JSON.parse(out) as { answer: string; peer?: string; ms: number }[];
  return { answers: rows.map((r) => r.answer), peers: rows.map((r) => r.peer ?? ''), times: rows.map((r) => r.ms) };
}

/** Counts answers per pod. */
export function tally(p: Probe): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of p.answers) out[a] = (out[a] ?? 0) + 1;
  return out;
}
