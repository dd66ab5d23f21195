// End-to-end pieces: the fake API server (fake-apiserver.mjs) and `nftlink proxy` as child processes
// inside the cluster's node namespace, where the proxy's API connection, /healthz, /metrics and
// health-check NodePorts live (as on a real node with hostNetwork). Every address is 127.0.0.1
// inside a namespace the test created, or in 198.18.0.0/15.

import { kubeconfigYaml } from '../helpers/kubeconfig.js';
import { LineRpc } from '../helpers/line-rpc.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Netns } from '../../src/netns/netns.js';
import type { Cluster } from '../../src/netns/cluster.js';
import { sleep } from '../proxy/dataplane/helpers.js';
import { ProxyProcess } from '../../src/netns/proxy-process.js';
import type { Resource, SavedState } from '../helpers/fake-apiserver.mjs';

// The proxy process (src/netns/proxy-process.ts, shared with the demo and the benchmarks); the e2e tests take it from here.
export { BIN, ProxyProcess, runProxy, type LogLine } from '../../src/netns/proxy-process.js';

const FAKE = new URL('./fake-apiserver.mjs', import.meta.url).pathname;
/** Where the fake API server listens inside the node namespace. */
export const API_PORT = 6443;
export const TOKEN = 'e2e-service-account-token';

export type { Resource } from '../helpers/fake-apiserver.mjs';
export type ApiState = SavedState;
export interface ApiStats {
  lists: number;
  watches: number;
  bookmarks: number;
  gone: number;
  refused: number;
  openWatches: number;
  rv: number;
  requests: { at: number; resource: Resource; watch: boolean; query: string; authorization: string; userAgent: string }[];
}

/** The fake API server process, driven over its stdin/stdout. */
export class ApiServer {
  private constructor(private readonly rpc: LineRpc) {}

  /**
   * Starts a server in `ns` on 127.0.0.1:API_PORT, from `state` (a previous server's) if given.
   * `beforeListen` runs against it before it accepts connections: changes made "while it was down".
   */
  static async start(ns: Netns, opts: { state?: ApiState; beforeListen?: (api: ApiServer) => Promise<void> } = {}): Promise<ApiServer> {
    let stateFile: string | undefined;
    if (opts.state) {
      stateFile = join(mkdtempSync(join(tmpdir(), 'nftlink-e2e-api-')), 'state.json');
      writeFileSync(stateFile, JSON.stringify(opts.state));
    }
    const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, FAKE, String(API_PORT), ...(stateFile ? [stateFile] : [])], { stdio: ['pipe', 'pipe', 'pipe'] });
    const api = new ApiServer(new LineRpc(child, 'fake apiserver'));
    await opts.beforeListen?.(api);
    await api.call('listen');
    if (stateFile) rmSync(join(stateFile, '..'), { recursive: true, force: true });
    return api;
  }

  call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    return this.rpc.call<T>(op, args);
  }

  upsert(resource: Resource, obj: unknown): Promise<unknown> {
    return this.call('upsert', { resource, obj });
  }
  remove(resource: Resource, namespace: string | undefined, name: string): Promise<unknown> {
    return this.call('remove', { resource, namespace, name });
  }
  set(key: 'pauseWatches' | 'refuseWatches' | 'goneAsHttpStatus' | 'bookmarkMs' | 'listDelayMs' | 'watchDelayMs', value: boolean | number): Promise<unknown> {
    return this.call('set', { key, value });
  }
  stats(): Promise<ApiStats> {
    return this.call<ApiStats>('stats');
  }

  /** Stops the process (connections drop); resolves with its state, for the next one. */
  async stop(): Promise<ApiState> {
    const state = await this.call<ApiState>('state');
    await this.call('stop').catch(() => undefined);
    await this.rpc.exited;
    return state;
  }

  /** Kills it without a word (SIGKILL): its connections are reset. */
  kill(): Promise<void> {
    return this.rpc.kill();
  }
}

/** A temp directory with kubeadm-shaped files: the kubeconfig (tokenFile user) and the config. */
export class ProxyFiles {
  readonly dir = mkdtempSync(join(tmpdir(), 'nftlink-e2e-'));
  readonly kubeconfig = join(this.dir, 'kubeconfig.conf');
  readonly tokenFile = join(this.dir, 'token');

  constructor(server = `http://127.0.0.1:${API_PORT}`) {
    writeFileSync(this.tokenFile, TOKEN);
    // kubeadm's kube-proxy kubeconfig.conf, with the service account token file; plain http to the
    // fake server needs insecure-skip-tls-verify (a real one has certificate-authority instead).
    writeFileSync(this.kubeconfig, kubeconfigYaml({ server, tokenFile: this.tokenFile }));
  }

  /** A KubeProxyConfiguration as kubeadm writes it (mode nftables), with `extra` YAML lines appended. */
  config(opts: { syncPeriod?: string; minSyncPeriod?: string; clusterCIDR?: string; detectLocalMode?: string; extra?: string; name?: string } = {}): string {
    const path = join(this.dir, opts.name ?? 'config.conf');
    writeFileSync(
      path,
      `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
bindAddress: 0.0.0.0
clientConnection:
  acceptContentTypes: ""
  burst: 0
  contentType: ""
  kubeconfig: ${this.kubeconfig}
  qps: 0
clusterCIDR: ${opts.clusterCIDR ?? '198.18.0.0/16'}
configSyncPeriod: 0s
conntrack:
  maxPerCore: null
  min: null
  tcpCloseWaitTimeout: null
  tcpEstablishedTimeout: null
detectLocalMode: "${opts.detectLocalMode ?? ''}"
enableProfiling: false
healthzBindAddress: ""
hostnameOverride: node
iptables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
metricsBindAddress: ""
mode: nftables
nftables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: ${opts.minSyncPeriod ?? '100ms'}
  syncPeriod: ${opts.syncPeriod ?? '30s'}
nodePortAddresses: null
oomScoreAdj: null
portRange: ""
${opts.extra ?? ''}
`,
    );
    return path;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface HttpAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

const GET = `
const [url, timeout] = process.argv.slice(1);
const req = require('http').get(url, { agent: false, timeout: Number(timeout) }, (res) => {
  let body = ''; res.on('data', (d) => (body += d));
  res.on('end', () => console.log(JSON.stringify({ status: res.statusCode, body, headers: res.headers })));
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', (e) => console.log(JSON.stringify({ status: 0, body: e.code || e.message, headers: {} })));
`;

/** An HTTP GET from inside `ns` (status 0 when no answer). */
export function httpGet(ns: Netns, url: string, timeoutMs = 2000): HttpAnswer {
  return JSON.parse(ns.exec(process.execPath, ['-e', GET, url, String(timeoutMs)])) as HttpAnswer;
}

/** The proxy's /metrics, from its metrics port (127.0.0.1:10249 in the node namespace). */
export function scrapeMetrics(node: Netns): string {
  const a = httpGet(node, 'http://127.0.0.1:10249/metrics');
  if (a.status !== 200) throw new Error(`/metrics answered ${a.status}: ${a.body}`);
  return a.body;
}

/** The value of one sample ("name{labels}" exactly as exposed), or undefined. */
export function sample(metrics: string, series: string): number | undefined {
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** The one Node the e2e clusters have, as the API server serves it. */
export const NODE = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node' }, spec: {} };

/** Stops what a test file started, in the order that leaves nothing behind; any part may be missing. */
export async function tearDown(parts: { proxy?: ProxyProcess; api?: ApiServer; cluster?: Cluster; files?: ProxyFiles }): Promise<void> {
  await parts.proxy?.stop();
  await parts.api?.kill();
  parts.cluster?.remove();
  parts.files?.cleanup();
}

export { sleep };

/** Polls `check` until it returns true; the error names `what` and `detail()`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000, detail: () => string = () => ''): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${detail() ? `\n${detail()}` : ''}`);
    await sleep(100);
  }
}

/** The tables of a namespace ("ip kube-proxy", ...). */
export function tables(ns: Netns): string[] {
  return ns
    .exec('nft', ['list', 'tables'])
    .split('\n')
    .map((l) => l.replace(/^table /, '').trim())
    .filter(Boolean);
}
