// `npm run bench:localhost`: what the localhost NodePort proxy costs against the kernel path.
// Side by side in one run, alternating: throughput (MB/s, 8 parallel streams for 10 s) and
// connection rate (connections/s, request and response on each) through 127.0.0.1:<nodePort>
// (the userspace proxy) and through the ClusterIP (nftables DNAT), to the same backend.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../src/package-root.js';
import { CLUSTER, createCluster, servePod } from '../src/netns/cluster.js';
import { ProxyProcess } from '../src/netns/proxy-process.js';
import { median } from './stats.js';
import { setTimeout as sleep } from 'node:timers/promises';

const root = packageRoot();
const CLUSTER_IP = '198.18.200.40';
const PORTS = { stream: { nodePort: 30100, service: 81, pod: 9100 }, http: { nodePort: 30101, service: 80, pod: 8080 } };

// The backend's bulk sender: every connection gets an endless stream of 64 KiB writes.
const STREAMER = `
const chunk = Buffer.alloc(65536, 120);
require('net').createServer((s) => {
  s.on('error', () => {});
  const pump = () => { while (s.write(chunk)) {} };
  s.on('drain', pump); pump();
}).listen(${PORTS.stream.pod}, () => console.log('ready'));`;

// The load generator, run inside the node namespace.
const LOAD = `
const net = require('net');
const [mode, host, port, parallel, seconds] = process.argv.slice(1);
const end = Date.now() + Number(seconds) * 1000;
if (mode === 'throughput') {
  let bytes = 0, open = 0;
  for (let i = 0; i < Number(parallel); i++) {
    const s = net.connect({ host, port: Number(port) });
    open++;
    s.on('data', (d) => (bytes += d.length));
    s.on('error', () => {});
  }
  setTimeout(() => { console.log(JSON.stringify({ mbPerSecond: bytes / 1e6 / Number(seconds) })); process.exit(0); }, Number(seconds) * 1000);
} else {
  let done = 0, errors = 0;
  const one = () => {
    if (Date.now() >= end) return finish();
    const s = net.connect({ host, port: Number(port) }, () => s.write('GET / HTTP/1.0\\r\\n\\r\\n'));
    s.on('data', () => {});
    s.on('end', () => { done++; s.destroy(); one(); });
    s.on('error', () => { errors++; s.destroy(); one(); });
  };
  let finished = 0;
  const finish = () => { if (++finished === Number(parallel)) { console.log(JSON.stringify({ perSecond: done / Number(seconds), errors })); process.exit(0); } };
  for (let i = 0; i < Number(parallel); i++) one();
}`;

interface Figures {
  kernel: number[];
  localhost: number[];
}

function run(nodeNs: string, args: string[]): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', nodeNs, process.execPath, '-e', LOAD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Record<string, number>) : reject(new Error(`load generator failed (${code}): ${err}`))));
  });
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const seconds = quick ? 2 : 10;
  const rounds = quick ? 1 : 3;
  const cluster = createCluster(1, 'nftlink-blh');
  const dir = mkdtempSync(join(tmpdir(), 'nftlink-blh-'));
  let proxy: ProxyProcess | undefined;
  try {
    const pod = cluster.pods[0]!;
    await servePod(pod);
    await new Promise<void>((resolve, reject) => {
      const s = pod.ns.spawn(process.execPath, ['-e', STREAMER]);
      s.stdout!.once('data', () => resolve());
      s.once('exit', (c) => reject(new Error(`streamer exited ${c}`)));
    });
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'bench', namespace: 'default' },
      spec: {
        type: 'NodePort',
        clusterIP: CLUSTER_IP,
        ports: [
          { name: 'stream', protocol: 'TCP', port: PORTS.stream.service, nodePort: PORTS.stream.nodePort },
          { name: 'http', protocol: 'TCP', port: PORTS.http.service, nodePort: PORTS.http.nodePort },
        ],
      },
    };
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'bench-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'bench' } },
      addressType: 'IPv4',
      ports: [
        { name: 'stream', protocol: 'TCP', port: PORTS.stream.pod },
        { name: 'http', protocol: 'TCP', port: PORTS.http.pod },
      ],
      endpoints: [{ addresses: [pod.ipv4], conditions: { ready: true }, nodeName: 'node' }],
    };
    writeFileSync(join(dir, 'bench.json'), JSON.stringify({ kind: 'List', apiVersion: 'v1', items: [svc, slice] }));
    const px = (proxy = ProxyProcess.start(cluster.node, ['--manifests', dir, '--node-name', 'node', '--node-ip', CLUSTER.nodeIPv4, '--nodeport-addresses', `${CLUSTER.nodeIPv4}/32,127.0.0.1/32`, '-v', '4']));
    const opened = (): number => (px.raw.match(/listener opened/g) ?? []).length;
    for (let i = 0; i < 100 && opened() < 2; i++) await sleep(100);
    if (opened() < 2) throw new Error(`the proxy did not open its listeners:\n${px.raw}`);

    const throughput: Figures = { kernel: [], localhost: [] };
    const rate: Figures = { kernel: [], localhost: [] };
    for (let r = 0; r < rounds; r++) {
      // Alternate which side goes first, so neither always runs on a warmer machine.
      const order: (keyof Figures)[] = r % 2 === 0 ? ['kernel', 'localhost'] : ['localhost', 'kernel'];
      for (const side of order) {
        const [host, sp, hp] = side === 'kernel' ? [CLUSTER_IP, PORTS.stream.service, PORTS.http.service] : ['127.0.0.1', PORTS.stream.nodePort, PORTS.http.nodePort];
        throughput[side].push((await run(cluster.node.name, ['throughput', host, String(sp), '8', String(seconds)])).mbPerSecond!);
        rate[side].push((await run(cluster.node.name, ['rate', host, String(hp), '8', String(seconds)])).perSecond!);
      }
    }
    const row = (name: string, f: Figures, unit: string): string => {
      const k = median(f.kernel);
      const l = median(f.localhost);
      return `${name.padEnd(20)} ${k.toFixed(0).padStart(10)} ${l.toFixed(0).padStart(10)}  ${unit.padEnd(8)} ${((l / k) * 100).toFixed(0).padStart(5)}%   ${l / k >= 0.5 ? 'PASS' : 'MISS'} (target >= 50%)`;
    };
    console.log(`localhost NodePort proxy vs the ClusterIP kernel path (medians of ${rounds}, ${seconds} s each, 8 parallel)`);
    console.log(`${''.padEnd(20)} ${'kernel'.padStart(10)} ${'localhost'.padStart(10)}  ${'unit'.padEnd(8)} ratio`);
    console.log(row('throughput', throughput, 'MB/s'));
    console.log(row('connection rate', rate, 'conn/s'));
    mkdirSync(join(root, 'bench-results'), { recursive: true });
    writeFileSync(join(root, 'bench-results', 'localhost.json'), JSON.stringify({ seconds, rounds, parallel: 8, throughputMBps: throughput, connectionsPerSecond: rate }, null, 2));
  } finally {
    await proxy?.stop();
    cluster.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`bench:localhost failed: ${(err as Error).message}`);
  process.exitCode = 1;
});
