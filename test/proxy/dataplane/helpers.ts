// Shared pieces of the proxy's data-plane tests: a one-node cluster of namespaces with the proxy
// programming the node, manifests written into a temp directory (replaced by rename, as editors
// and kubectl-style tools do, so the ManifestSource watcher sees whole files), waits for the sync
// that programmed a change, a background probe loop, and the chi-squared goodness-of-fit test.

import { afterAll, beforeAll, expect } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { CLUSTER, createCluster, servePod, type Cluster, type Probe } from '../../../src/netns/cluster.js';
import type { Netns } from '../../../src/netns/netns.js';
import { layoutConfigs } from '../../../src/config/layout-configs.js';
import type { ProxySettings } from '../../../src/config/proxy-settings.js';
import { isLayoutName, type LayoutName } from '../../../src/proxy/layout/index.js';

/**
 * The layout the data-plane tests program: vitest runs test/proxy once per layout (vitest.config.ts
 * sets NFTLINK_TEST_LAYOUT for the second run), so every feature is proven for both.
 */
export const TEST_LAYOUT: LayoutName = (() => {
  const v = process.env.NFTLINK_TEST_LAYOUT ?? 'slots';
  if (!isLayoutName(v)) throw new Error(`NFTLINK_TEST_LAYOUT=${v} is not a layout`);
  return v;
})();
import { serviceChainBase, chainName } from '../../../src/proxy/layout/names.js';
import type { LogFields, Logger } from '../../../src/logging/logger.js';
import { Proxier, type SyncReport } from '../../../src/proxy/proxier.js';
import { Nftables } from '../../../src/nft/index.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';
import type { SyncResult } from '../../../src/proxy/sync/family-sync.js';
import { requirePrivileges } from '../../helpers/netns.js';

export { CLUSTER };
export const NODE_NAME = 'node';

// ---------------------------------------------------------------------------------------------
// Clusters

/** A cluster of `pods` pods, each serving HTTP and UDP on 8080; fails (never skips) without root. */
export async function startCluster(pods: number, prefix = 'nlpx'): Promise<Cluster> {
  requirePrivileges();
  const c = createCluster(pods, prefix);
  try {
    await Promise.all(c.pods.map((p) => servePod(p)));
    return c;
  } catch (err) {
    c.remove();
    throw err;
  }
}

/** The address a pod's server sees when the node masquerades: the node's end of that pod's link. */
export function nodeAddressTowards(c: Cluster, podIndex: number): string {
  return c.pods[podIndex]!.ipv4.replace(/\.2$/, '.1');
}

// ---------------------------------------------------------------------------------------------
// Manifests

export interface PortSpec {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port: number;
  nodePort?: number;
  targetPort?: number;
}

export interface ServiceSpec {
  name: string;
  namespace?: string;
  type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  /** One per family, in order (the first is spec.clusterIP). */
  clusterIPs: string[];
  ports?: PortSpec[];
  externalIPs?: string[];
  loadBalancerIPs?: string[];
  loadBalancerSourceRanges?: string[];
  externalTrafficPolicy?: 'Cluster' | 'Local';
  internalTrafficPolicy?: 'Cluster' | 'Local';
  /** ClientIP affinity with this timeout. */
  affinitySeconds?: number;
}

const familyOf = (ip: string): 'IPv4' | 'IPv6' => (ip.includes(':') ? 'IPv6' : 'IPv4');

export const HTTP: PortSpec = { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 };

export function service(s: ServiceSpec): Service {
  const spec: NonNullable<Service['spec']> = {
    type: s.type ?? 'ClusterIP',
    clusterIP: s.clusterIPs[0]!,
    clusterIPs: s.clusterIPs,
    ipFamilies: s.clusterIPs.map(familyOf),
    ipFamilyPolicy: s.clusterIPs.length > 1 ? 'RequireDualStack' : 'SingleStack',
    ports: (s.ports ?? [HTTP]).map((p) => ({ targetPort: 8080, ...p })),
  };
  if (s.externalIPs) spec.externalIPs = s.externalIPs;
  if (s.loadBalancerSourceRanges) spec.loadBalancerSourceRanges = s.loadBalancerSourceRanges;
  if (s.externalTrafficPolicy) spec.externalTrafficPolicy = s.externalTrafficPolicy;
  if (s.internalTrafficPolicy) spec.internalTrafficPolicy = s.internalTrafficPolicy;
  if (s.affinitySeconds !== undefined) {
    spec.sessionAffinity = 'ClientIP';
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: s.affinitySeconds } };
  }
  const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: s.name, namespace: s.namespace ?? 'default' }, spec };
  if (s.loadBalancerIPs) svc.status = { loadBalancer: { ingress: s.loadBalancerIPs.map((ip) => ({ ip, ipMode: 'VIP' })) } };
  return svc;
}

export interface EndpointSpec {
  ip: string;
  nodeName?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  /** hints.forZones / hints.forNodes names (topology-aware routing). */
  zoneHints?: string[];
  nodeHints?: string[];
}

export interface SliceSpec {
  /** The Service it belongs to. */
  service: string;
  name?: string;
  namespace?: string;
  addressType?: 'IPv4' | 'IPv6';
  /** Default: [{ name: 'http', protocol: 'TCP', port: 8080 }]. */
  ports?: { name?: string; protocol?: 'TCP' | 'UDP' | 'SCTP'; port: number }[];
  /** Addresses (on this node) or full endpoint specs. */
  endpoints: (string | EndpointSpec)[];
}

export function slice(s: SliceSpec): EndpointSlice {
  const eps = s.endpoints.map((e) => (typeof e === 'string' ? { ip: e } : e));
  const addressType = s.addressType ?? (eps[0] && eps[0].ip.includes(':') ? 'IPv6' : 'IPv4');
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: s.name ?? `${s.service}-${addressType.toLowerCase()}`,
      namespace: s.namespace ?? 'default',
      labels: { 'kubernetes.io/service-name': s.service },
    },
    addressType,
    ports: s.ports ?? [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false },
      nodeName: e.nodeName ?? NODE_NAME,
      ...(e.zoneHints || e.nodeHints
        ? { hints: { ...(e.zoneHints ? { forZones: e.zoneHints.map((name) => ({ name })) } : {}), ...(e.nodeHints ? { forNodes: e.nodeHints.map((name) => ({ name })) } : {}) } }
        : {}),
    })),
  };
}

/** A temp directory of manifest files; every write replaces a file by rename. */
export class ManifestDir {
  readonly path = mkdtempSync(join(tmpdir(), 'nftlink-proxy-'));
  private seq = 0;

  /** Writes objects as one JSON List file (name without extension). */
  write(name: string, ...objects: unknown[]): void {
    this.writeRaw(`${name}.json`, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 1));
  }

  /** Writes a file with exactly this text (name with extension). The temp name is hidden (skipped by the source). */
  writeRaw(file: string, text: string): void {
    const temp = join(this.path, `.tmp-${process.pid}-${this.seq++}`);
    writeFileSync(temp, text);
    renameSync(temp, join(this.path, file));
  }

  read(file: string): string {
    return readFileSync(join(this.path, file), 'utf8');
  }

  remove(name: string): void {
    unlinkSync(join(this.path, name.includes('.') ? name : `${name}.json`));
  }

  cleanup(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The proxy

export interface LogRecord {
  level: 'error' | 'warn' | 'info' | 'debug';
  msg: string;
  fields: LogFields;
}

/** A Logger that keeps every call. */
export function recordingLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at = (level: LogRecord['level']) => (msg: string, fields: LogFields = {}) => void records.push({ level, msg, fields });
  return { records, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

export function proxySettings(overrides: Partial<ProxySettings> = {}): ProxySettings {
  return {
    table: 'kube-proxy',
    layout: TEST_LAYOUT,
    nodeName: NODE_NAME,
    nodeIPs: [CLUSTER.nodeIPv4, CLUSTER.nodeIPv6],
    clusterCIDRs: [CLUSTER.podCIDRv4, CLUSTER.podCIDRv6],
    serviceCIDRs: [CLUSTER.serviceCIDRv4, CLUSTER.serviceCIDRv6],
    nodePortAddresses: [],
    masqueradeAll: false,
    masqueradeBit: 14,
    minSyncPeriodMs: 100,
    syncPeriodMs: 60_000,
    localhostNodePorts: true,
    ...overrides,
  };
}

export interface RunningProxy {
  proxier: Proxier;
  log: ReturnType<typeof recordingLogger>;
  reports: SyncReport[];
  /**
   * The next sync report (after this call) that satisfies `pred`; default: one that wrote
   * something to the ip or ip6 table. Call it in the same tick as the manifest write.
   */
  nextSync(pred?: (r: SyncReport) => boolean, timeoutMs?: number): Promise<SyncReport>;
  stop(): Promise<void>;
}

export const wroteSomething = (r: SyncReport): boolean => r.results.some((x) => x.operations > 0);

export function familyResult(r: SyncReport, family: 'ip' | 'ip6'): SyncResult {
  const res = r.results.find((x) => x.family === family);
  if (!res) throw new Error(`no ${family} result in sync report (error: ${r.error?.message})`);
  return res;
}

/** Starts a Proxier on the cluster's node, fed by `dir`; resolves after its first sync. */
export async function startProxy(c: Cluster, dir: ManifestDir, overrides: Partial<ProxySettings> = {}): Promise<RunningProxy> {
  const settings = proxySettings(overrides);
  const log = recordingLogger();
  const reports: SyncReport[] = [];
  let waiters: { pred: (r: SyncReport) => boolean; resolve: (r: SyncReport) => void }[] = [];
  let firstResolve!: (r: SyncReport) => void;
  const first = new Promise<SyncReport>((r) => (firstResolve = r));
  const proxier = new Proxier({
    source: new ManifestSource(dir.path, { debounceMs: 30 }),
    connect: () => Nftables.open({ netns: c.node.name }),
    netns: c.node.name,
    nodeName: settings.nodeName,
    layout: settings.layout,
    families: layoutConfigs(settings),
    minSyncPeriodMs: settings.minSyncPeriodMs,
    syncPeriodMs: settings.syncPeriodMs,
    log,
    onSync: (r) => {
      reports.push(r);
      if (reports.length === 1) firstResolve(r);
      const due = waiters.filter((w) => w.pred(r));
      waiters = waiters.filter((w) => !due.includes(w));
      for (const w of due) w.resolve(r);
    },
  });
  await proxier.start();
  const firstReport = await first;
  if (firstReport.error) throw firstReport.error;
  let stopped = false;
  return {
    proxier,
    log,
    reports,
    nextSync(pred = wroteSomething, timeoutMs = 5000) {
      return new Promise<SyncReport>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w.resolve !== done);
          reject(new Error(`no matching sync within ${timeoutMs} ms (last: ${JSON.stringify(reports.at(-1)?.results)})`));
        }, timeoutMs);
        const done = (r: SyncReport): void => {
          clearTimeout(timer);
          resolve(r);
        };
        waiters.push({ pred, resolve: done });
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await proxier.stop();
    },
  };
}

/** The kube-proxy name of a service port's chain ("service-HASH-ns/svc/proto/port"). */
export function serviceChain(name: string, portName = 'http', protocol = 'TCP', namespace = 'default'): string {
  return chainName.cluster(serviceChainBase({ namespace, name, protocol: protocol as 'TCP', portName }));
}

// ---------------------------------------------------------------------------------------------
// Traffic

/** The answering pods of a probe, and whether every attempt was answered. */
export function answered(p: Probe): string[] {
  return p.answers.filter((a) => !a.startsWith('error:'));
}

const LOOP = `
const [host, port, stopFile, intervalMs] = process.argv.slice(1);
const http = require('http'), fs = require('fs');
const one = () => new Promise((resolve) => {
  const req = http.get({ host, port: Number(port), path: '/', agent: false, timeout: 1000 }, (res) => {
    let body = ''; res.on('data', (d) => (body += d));
    res.on('end', () => { try { resolve(JSON.parse(body).pod); } catch { resolve('error:body'); } });
  });
  req.on('timeout', () => { req.destroy(); resolve('error:timeout'); });
  req.on('error', (e) => resolve('error:' + (e.code || e.message)));
});
(async () => {
  console.log('started');
  while (!fs.existsSync(stopFile)) {
    console.log(await one());
    await new Promise((r) => setTimeout(r, Number(intervalMs)));
  }
  console.log('stopped');
})();
`;

export interface ProbeLoop {
  /** Resolves once the loop has made its first attempt. */
  started: Promise<void>;
  /** How many answers so far. */
  count(): number;
  /** The answers so far (the loop's own array: read, do not keep). */
  answers(): readonly string[];
  /** Ends the loop after its current attempt; resolves with every answer. */
  stop(): Promise<string[]>;
}

/** HTTP GETs on new connections, one after another, in a background process (the test's event loop stays free). */
export function probeLoop(from: Netns, host: string, port: number, intervalMs = 10): ProbeLoop {
  const stopDir = mkdtempSync(join(tmpdir(), 'nftlink-loop-'));
  const stopFile = join(stopDir, 'stop');
  const child: ChildProcess = from.spawn(process.execPath, ['-e', LOOP, host, String(port), stopFile, String(intervalMs)]);
  const answers: string[] = [];
  let buf = '';
  let stderr = '';
  let startedResolve!: () => void;
  const started = new Promise<void>((r) => (startedResolve = r));
  // The temp dir goes with the loop, however it ends (stop(), or its namespace removed under it).
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      rmSync(stopDir, { recursive: true, force: true });
      resolve();
    }),
  );
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const line of lines) {
      if (line === 'started') continue;
      if (line === 'stopped') continue;
      answers.push(line);
      if (answers.length === 1) startedResolve();
    }
  });
  return {
    started,
    count: () => answers.length,
    answers: () => answers,
    async stop() {
      writeFileSync(stopFile, '');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      if (stderr) throw new Error(`probe loop failed: ${stderr}`);
      return answers;
    },
  };
}

export { setTimeout as sleep } from 'node:timers/promises';

// ---------------------------------------------------------------------------------------------
// Statistics

/** Pearson's chi-squared statistic of observed counts against a uniform distribution. */
export function chiSquaredUniform(counts: readonly number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, o) => sum + (o - expected) ** 2 / expected, 0);
}

/**
 * The upper-tail p-value of a chi-squared statistic with an even number of degrees of freedom
 * (closed form: e^{-x/2} Σ_{i<df/2} (x/2)^i / i!; for 2 degrees of freedom, e^{-x/2}).
 */
export function chiSquaredP(statistic: number, degreesOfFreedom: number): number {
  if (degreesOfFreedom <= 0 || degreesOfFreedom % 2 !== 0) throw new Error('only even degrees of freedom');
  const half = statistic / 2;
  let term = 1;
  let sum = 1;
  for (let i = 1; i < degreesOfFreedom / 2; i++) {
    term *= half / i;
    sum += term;
  }
  return Math.exp(-half) * sum;
}

/**
 * The smallest p-value a spread over endpoints may show and still pass as even. CI makes a few
 * such checks on every submission, so this sets how often a fair spread fails by chance: at
 * 0.001 about one run in two hundred did (a fair 130/91/79 failed one), at 1e-5 about one in
 * twenty thousand. The check keeps its power: over 300 connections a 50/25/25 split of 3
 * endpoints gives a chi-squared near 37, a p-value near 1e-8.
 */
export const EVEN_SPREAD_MIN_P = 1e-5;

/** Asserts that `counts` reached exactly `names`, spread evenly (chi-squared against uniform). */
export function expectEvenSpread(counts: Record<string, number>, names: readonly string[]): void {
  const observed = names.map((n) => counts[n] ?? 0);
  const chi2 = chiSquaredUniform(observed);
  expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual([...names].sort());
  expect(chiSquaredP(chi2, names.length - 1), `chi2 ${chi2.toFixed(2)} for ${JSON.stringify(counts)}`).toBeGreaterThan(EVEN_SPREAD_MIN_P);
}

export type { Cluster, Probe };

/**
 * One cluster of `pods` pods and a proxy fed by a manifest directory, for a describe block: made
 * before its tests (after `write` fills the directory), removed after them. `timeoutMs` is the
 * set-up's hook timeout (default: the config's hookTimeout).
 */
export function proxyClusterFor(opts: {
  pods: number;
  prefix: string;
  write: (dir: ManifestDir, c: Cluster) => void;
  settings?: Partial<ProxySettings>;
  timeoutMs?: number;
}): {
  readonly c: Cluster;
  readonly dir: ManifestDir;
  readonly px: RunningProxy;
} {
  let c: Cluster | undefined;
  let dir: ManifestDir | undefined;
  let px: RunningProxy | undefined;
  beforeAll(async () => {
    dir = new ManifestDir();
    c = await startCluster(opts.pods, opts.prefix);
    opts.write(dir, c);
    px = await startProxy(c, dir, opts.settings);
  }, opts.timeoutMs);
  afterAll(async () => {
    await px?.stop();
    c?.remove();
    dir?.cleanup();
  });
  const made = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('proxyClusterFor: used outside the tests of its describe block');
    return v;
  };
  return {
    get c() {
      return made(c);
    },
    get dir() {
      return made(dir);
    },
    get px() {
      return made(px);
    },
  };
}
