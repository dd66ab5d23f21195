// Scenario 7 (issue 31): hostile HTTP clients against the proxy's health server (0.0.0.0:10256,
// reached from the client namespace as a load balancer would) and its metrics server
// (127.0.0.1:10249, from inside the node namespace). Slow connections that send a request line
// and then one header line every few seconds are held open while fresh clients ask /livez and
// /metrics; then oversized headers, garbage bytes and a large body. The proxy's open fds are
// counted before, during and after: every connection must be given back.

import type { ChildProcess } from 'node:child_process';
import type { Netns } from '../../src/netns/netns.js';
import { CLUSTER } from '../../src/netns/cluster.js';
import { processFigures, type ReliabilityNode } from './node.js';
import { lastLine, startScript } from '../script-child.js';

/** One hostile client, by mode (argv[1]): hold, probe or raw. Prints JSON lines. */
const CLIENT = `
const net = require('net');
const [mode, host, port, a, b] = process.argv.slice(1);
const now = () => performance.now();
if (mode === 'hold') {
  // a: connections. Each sends a request line and then one header line every 2 s, never ending it.
  const sockets = [];
  let connected = 0, closedByServer = 0, stopping = false;
  for (let i = 0; i < Number(a); i++) {
    const s = net.connect({ host, port: Number(port) });
    s.on('connect', () => { s.write('GET /livez HTTP/1.1\\r\\nHost: x\\r\\n'); if (++connected === Number(a)) console.log(JSON.stringify({ held: connected })); });
    s.on('error', () => {});
    s.on('close', () => { if (!stopping) closedByServer++; });
    s.on('data', () => {});
    sockets.push(s);
  }
  const trickle = setInterval(() => sockets.forEach((s, i) => s.writable && s.write('X-Slow-' + i + ': 1\\r\\n')), 2000);
  process.on('SIGTERM', () => {
    stopping = true;
    clearInterval(trickle);
    sockets.forEach((s) => s.destroy());
    process.stdout.write(JSON.stringify({ connected, closedByServer }) + '\\n', () => process.exit(0));
  });
} else if (mode === 'probe') {
  // a: path, b: count. GETs one after another, each on a new connection: status and ms.
  const one = () => new Promise((resolve) => {
    const t0 = now();
    const req = require('http').get({ host, port: Number(port), path: a, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: now() - t0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, ms: now() - t0, error: e.message }));
  });
  (async () => { const out = []; for (let i = 0; i < Number(b); i++) out.push(await one()); console.log(JSON.stringify(out)); })();
} else {
  // raw, a: what to send. The first line of the answer (or none) and whether the server closed.
  const t0 = now();
  const s = net.connect({ host, port: Number(port) });
  let answer = '';
  let sent = 0;
  const done = (why) => { console.log(JSON.stringify({ statusLine: answer.split('\\r\\n')[0], closed: why === 'close', ms: now() - t0, bodyMB: sent })); process.exit(0); };
  s.on('data', (d) => { answer += d.toString('latin1'); });
  s.on('close', () => done('close'));
  s.on('error', () => {});
  setTimeout(() => done('timeout'), 10000);
  s.on('connect', () => {
    if (a === 'oversized') {
      // 100 kB of one header, 1 kB at a time until the server answers: written at once, the
      // rest would arrive after the server closed, and its reset could discard the answer.
      s.write('GET /livez HTTP/1.1\\r\\nHost: x\\r\\nX-Big: ');
      let sent = 0;
      const more = () => { if (answer || !s.writable) return; if (sent++ < 100) { s.write('a'.repeat(1024)); setTimeout(more, 1); } else s.write('\\r\\n\\r\\n'); };
      more();
    }
    else if (a === 'garbage') s.write(require('crypto').randomBytes(4096));
    else if (a === 'small-body') s.write('POST /livez HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\nContent-Length: 1024\\r\\n\\r\\n' + 'x'.repeat(1024));
    else if (a === 'body') {
      // 64 MB announced and sent as fast as the server takes it.
      s.write('POST /livez HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/octet-stream\\r\\nContent-Length: ' + 64 * 2 ** 20 + '\\r\\n\\r\\n');
      const chunk = Buffer.alloc(2 ** 20, 120);
      const more = () => { while (sent < 64 && s.writable) { sent++; if (!s.write(chunk)) return s.once('drain', more); } };
      more();
    }
  });
}
`;

export interface ProbeAnswer {
  status: number;
  ms: number;
  error?: string;
}

export interface RawAnswer {
  statusLine: string;
  closed: boolean;
  ms: number;
  /** With a body: how many MB of it the client could write before the server closed. */
  bodyMB: number;
}

export interface HostileResult {
  slowConnections: number;
  /** The slow connections the proxy had accepted (counted by the client). */
  held: number;
  /** /livez from the client namespace while they are held. */
  livez: ProbeAnswer[];
  /** /metrics from the node's loopback while `slowConnections / 5` more are held on the metrics port. */
  metrics: ProbeAnswer[];
  oversized: { healthz: RawAnswer; metrics: RawAnswer };
  garbage: { healthz: RawAnswer; metrics: RawAnswer };
  /** A 1 kB body (answered as without one), and 64 MB (read up to a bound, then the connection closed). */
  smallBody: RawAnswer;
  largeBody: { healthz: RawAnswer; rssBeforeMB: number; rssAfterMB: number };
  fds: { baseline: number; held: number; after: number };
  /** /livez once everything is over. */
  livezAfter: ProbeAnswer[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HEALTHZ = { host: CLUSTER.nodeIPv4, port: 10256 };
const METRICS = { host: '127.0.0.1', port: 10249 };

function run(ns: Netns, args: string[]): unknown {
  return JSON.parse(ns.exec(process.execPath, ['-e', CLIENT, ...args]));
}

async function hold(ns: Netns, host: string, port: number, count: number): Promise<{ child: ChildProcess; held: number; release(): Promise<{ connected: number; closedByServer: number }> }> {
  const holder = startScript(ns, CLIENT, ['hold', host, String(port), String(count)], 'held');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([holder.ready, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
  clearTimeout(timer);
  if (!holder.stdout().includes('held')) {
    holder.child.kill('SIGKILL');
    throw new Error(`reliability: ${count} slow connections to ${host}:${port} were not all accepted in 30 s`);
  }
  const held = (JSON.parse(holder.stdout().split('\n')[0]!) as { held: number }).held;
  return {
    child: holder.child,
    held,
    async release() {
      holder.child.kill('SIGTERM');
      return JSON.parse(lastLine((await holder.ended).stdout)) as { connected: number; closedByServer: number };
    },
  };
}

export async function runHostile(node: ReliabilityNode, slowConnections: number, log: (line: string) => void = () => undefined): Promise<HostileResult> {
  const { client, node: nodeNs } = node.cluster;
  if (!node.proxy) node.startProxy();
  await node.waitServing(120_000);
  const pid = node.proxy!.child.pid!;
  const probe = (ns: Netns, at: { host: string; port: number }, path: string, count: number): ProbeAnswer[] => run(ns, ['probe', at.host, String(at.port), path, String(count)]) as ProbeAnswer[];
  const raw = (ns: Netns, at: { host: string; port: number }, what: string): RawAnswer => run(ns, ['raw', at.host, String(at.port), what]) as RawAnswer;
  // Warm: the first scrape builds the metrics registry's output once.
  probe(nodeNs, METRICS, '/metrics', 1);
  const baseline = processFigures(pid).fds;

  const slow = await hold(client, HEALTHZ.host, HEALTHZ.port, slowConnections);
  const slowMetrics = await hold(nodeNs, METRICS.host, METRICS.port, Math.ceil(slowConnections / 5));
  const heldFds = processFigures(pid).fds;
  log(`${slow.held} slow connections held on the health port and ${slowMetrics.held} on the metrics port: the proxy has ${heldFds} fds (${baseline} before)`);
  const livez = probe(client, HEALTHZ, '/livez', 10);
  const metrics = probe(nodeNs, METRICS, '/metrics', 3);
  const oversized = { healthz: raw(client, HEALTHZ, 'oversized'), metrics: raw(nodeNs, METRICS, 'oversized') };
  const garbage = { healthz: raw(client, HEALTHZ, 'garbage'), metrics: raw(nodeNs, METRICS, 'garbage') };
  const rssBeforeMB = processFigures(pid).rssBytes / 2 ** 20;
  const body = raw(client, HEALTHZ, 'body');
  const rssAfterMB = processFigures(pid).rssBytes / 2 ** 20;
  const smallBody = raw(client, HEALTHZ, 'small-body');
  await slow.release();
  await slowMetrics.release();

  // The server learns of the closes from the kernel: give it a moment, then count.
  let after = processFigures(pid).fds;
  for (let i = 0; i < 100 && after > baseline; i++) {
    await sleep(100);
    after = processFigures(pid).fds;
  }
  return {
    slowConnections,
    held: slow.held,
    livez,
    metrics,
    oversized,
    garbage,
    smallBody,
    largeBody: { healthz: body, rssBeforeMB, rssAfterMB },
    fds: { baseline, held: heldFds, after },
    livezAfter: probe(client, HEALTHZ, '/livez', 3),
  };
}
