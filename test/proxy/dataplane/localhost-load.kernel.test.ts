// 1,000 concurrent connections held through the localhost NodePort proxy: all served, and after
// they close the proxy's file descriptors and memory go back to their baseline (no leaks).

import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Cluster } from '../../../src/netns/cluster.js';
import { ProxyProcess } from '../../../src/netns/proxy-process.js';
import { CLUSTER, ManifestDir, service, slice, sleep, startCluster } from './helpers.js';

const CONNECTIONS = 1000;
let c: Cluster;
let dir: ManifestDir;
let proxy: ProxyProcess;

// A backend (beside the pod's usual servers on 8080) that answers each line and keeps the connection open.
const ECHO = `require('net').createServer((s) => s.on('data', () => s.write('ok\\n'))).listen(9090, () => console.log('ready'));`;
// Opens N connections at once, sends one line on each, waits for every answer, and holds them open.
const CLIENTS = `
const net = require('net');
const [n, port] = process.argv.slice(1).map(Number);
const socks = [];
let answered = 0, failed = 0;
for (let i = 0; i < n; i++) {
  const s = net.connect({ host: '127.0.0.1', port }, () => s.write('hi\\n'));
  s.once('data', () => { answered++; if (answered + failed === n) report(); });
  s.on('error', () => { failed++; if (answered + failed === n) report(); });
  socks.push(s);
}
function report() {
  console.log(JSON.stringify({ answered, failed }));
  setInterval(() => {}, 1000); // hold every connection until the test ends this process
}
`;

const fds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

beforeAll(async () => {
  c = await startCluster(1, 'nlld');
  await new Promise<void>((resolve) => {
    const s = c.pods[0]!.ns.spawn(process.execPath, ['-e', ECHO]);
    s.stdout!.once('data', () => resolve());
  });
  dir = new ManifestDir();
  dir.write('svc', service({ name: 'echo', type: 'NodePort', clusterIPs: ['198.18.200.30'], ports: [{ name: 'tcp', protocol: 'TCP', port: 80, nodePort: 30090 }] }), slice({ service: 'echo', ports: [{ name: 'tcp', protocol: 'TCP', port: 9090 }], endpoints: [c.pods[0]!.ipv4] }));
  proxy = ProxyProcess.start(c.node, ['--manifests', dir.path, '--node-name', 'node', '--node-ip', CLUSTER.nodeIPv4, '--nodeport-addresses', `${CLUSTER.nodeIPv4}/32,127.0.0.1/32`, '-v', '4']);
  for (let i = 0; i < 100 && !proxy.raw.includes('listener opened'); i++) await sleep(100);
  if (!proxy.raw.includes('listener opened')) throw new Error(`the proxy did not open its listener:\n${proxy.raw}`);
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  c?.remove();
  dir?.cleanup();
});

/** Opens `n` connections through the proxy, each answered once; `stop` closes them all. */
async function holdConnections(n: number): Promise<{ result: { answered: number; failed: number }; stop: () => Promise<void> }> {
  const clients = c.node.spawn(process.execPath, ['-e', CLIENTS, String(n), '30090']);
  const result = await new Promise<{ answered: number; failed: number }>((resolve) => clients.stdout!.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()))));
  return {
    result,
    stop: async () => {
      clients.kill('SIGTERM');
      await new Promise((r) => clients.once('exit', r));
    },
  };
}

it('holds 1,000 concurrent connections, serves all, and leaks nothing after they close', async () => {
  const pid = proxy.child.pid!;
  // The baseline is the proxy after its first relayed connection: the relay thread's epoll and
  // eventfd descriptors live as long as the process (native/relay.cc).
  const warm = await holdConnections(1);
  expect(warm.result).toEqual({ answered: 1, failed: 0 });
  await warm.stop();
  await sleep(500);
  const baseFds = fds(pid);
  const baseRss = rssKb(pid);
  const { result, stop } = await holdConnections(CONNECTIONS);
  expect(result).toEqual({ answered: CONNECTIONS, failed: 0 });
  // Each relayed connection holds two sockets in the proxy.
  expect(fds(pid) - baseFds).toBeGreaterThanOrEqual(2 * CONNECTIONS);
  // The clients go away: every connection closes at once.
  await stop();
  let after = fds(pid);
  for (let i = 0; i < 50 && after > baseFds; i++) {
    await sleep(100);
    after = fds(pid);
  }
  expect(after).toBeLessThanOrEqual(baseFds);
  // Memory: back near where it started (V8 keeps some heap; a leak of 1,000 connections would not fit).
  expect(rssKb(pid) - baseRss).toBeLessThan(30_000);
}, 60_000);
