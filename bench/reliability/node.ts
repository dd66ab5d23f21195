// The node the reliability scenarios run on: a cluster of namespaces (src/netns/cluster.ts: a node,
// a client, pods serving HTTP), the API server child in the node namespace loaded with the
// scenario's services, and `nftlink proxy` (the real CLI, bin/nftlink.js) following it through its
// informers, as kube-proxy runs on a node. Also what every scenario needs of that node: the
// stable services answering, the proxy's process figures, and the kernel compared with a clean
// cold start of the same objects.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER, createCluster, probe, servePod, type Cluster } from '../../src/netns/cluster.js';
import { Netns } from '../../src/netns/netns.js';
import { ProxyProcess } from '../../src/netns/proxy-process.js';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { kubeconfigYaml } from '../../test/helpers/kubeconfig.js';
import { API_PORT, ApiChild } from './api.js';
import { canonicalRuleset, diffRulesets, type CanonicalRuleset, type RulesetDiff } from './canonical.js';
import { clusterObjects, SERVICE_CIDR, type ClusterObjects } from './objects.js';

export interface NodeOptions {
  services: number;
  layout: LayoutName;
  /** The proxy's --min-sync-period (kube-proxy's default for nftables: 1s). */
  minSyncPeriod: string;
  /** Namespace name prefix (the scenario's). */
  prefix: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// A proxy runs outside the namespaces' process trees (ip netns exec), so removing them on
// SIGINT/SIGTERM would leave it running: killed first (registered before any namespace exists, so
// this runs before src/netns/netns.ts's handler removes them and exits).
const liveProxies = new Set<ProxyProcess>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => liveProxies.forEach((p) => p.child.kill('SIGKILL')));

export class ReliabilityNode {
  proxy: ProxyProcess | undefined;
  private done = false;
  private referenceSeq = 0;

  private constructor(
    readonly cluster: Cluster,
    readonly api: ApiChild,
    readonly objects: ClusterObjects,
    private readonly dir: string,
    readonly opts: NodeOptions,
  ) {}

  /** The cluster with its pods serving, the API server loaded and listening; no proxy yet. */
  static async create(opts: NodeOptions): Promise<ReliabilityNode> {
    const cluster = createCluster(3, opts.prefix);
    const dir = mkdtempSync(join(tmpdir(), `${opts.prefix}-`));
    let api: ApiChild | undefined;
    try {
      for (const p of cluster.pods) await servePod(p, 8080);
      api = ApiChild.start(cluster.node);
      const objects = clusterObjects(opts.services, cluster.pods.map((p) => p.ipv4), CLUSTER.nodeIPv4);
      await api.upsert('nodes', [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node' }, spec: {} }]);
      await api.upsert('services', objects.services);
      await api.upsert('endpointslices', objects.slices);
      await api.listen();
      writeFileSync(join(dir, 'token'), 'reliability-token');
      writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml({ server: `http://127.0.0.1:${API_PORT}`, tokenFile: join(dir, 'token') }));
      return new ReliabilityNode(cluster, api, objects, dir, opts);
    } catch (err) {
      await api?.kill();
      cluster.remove();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The flags both the live proxy and the reference cold start take (everything but the source). */
  private commonArgs(): string[] {
    return ['--node-name', 'node', '--node-ip', CLUSTER.nodeIPv4, '--cluster-cidr', CLUSTER.podCIDRv4, '--service-cidr', SERVICE_CIDR, '--layout', this.opts.layout, '--min-sync-period', this.opts.minSyncPeriod];
  }

  /** Starts `nftlink proxy` in the node namespace (the previous one must be gone). */
  startProxy(): ProxyProcess {
    // -v 4: its 'synced' lines tell when a (re)start has written its first sync.
    const p = ProxyProcess.start(this.cluster.node, ['--kubeconfig', join(this.dir, 'kubeconfig'), '-v', '4', ...this.commonArgs()]);
    liveProxies.add(p);
    this.proxy = p;
    return p;
  }

  /** kill -9, and waits for the process to be gone. */
  async killProxy(): Promise<void> {
    const p = this.proxy;
    if (!p) return;
    p.child.kill('SIGKILL');
    await p.exit;
    liveProxies.delete(p);
    this.proxy = undefined;
  }

  /** Whether every stable service answers one connection now. */
  stableAnswer(): boolean {
    return this.objects.stable.every((t) => {
      const [host, port] = t.address.split(':');
      return probe(this.cluster.client, host!, Number(port), { timeoutMs: 500 }).answers[0]!.startsWith('pod');
    });
  }

  /** Waits until every stable service answers; throws with the proxy's log tail if it never does. */
  async waitServing(ms: number): Promise<number> {
    const t0 = Date.now();
    while (!this.stableAnswer()) {
      if (Date.now() - t0 > ms) throw new Error(`reliability: the stable services never answered in ${ms} ms:\n${this.logTail()}`);
      await sleep(200);
    }
    return Date.now() - t0;
  }

  logTail(lines = 20): string {
    return (this.proxy?.raw ?? '').split('\n').slice(-lines).join('\n');
  }

  /** The node's ruleset in canonical form (bench/reliability/canonical.ts). */
  kernelRuleset(ns: Netns = this.cluster.node): CanonicalRuleset {
    return canonicalRuleset(ns.exec('nft', ['-j', 'list', 'ruleset']));
  }

  /**
   * A clean cold start of the API server's objects as they are now: `nftlink proxy --once` reading
   * them from a manifest file, inside a fresh namespace; its ruleset in canonical form.
   */
  async coldStartReference(): Promise<CanonicalRuleset> {
    const file = join(this.dir, `objects-${++this.referenceSeq}.json`);
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: await this.api.objects() }));
    const scratch = Netns.create(`${this.opts.prefix}-ref`);
    try {
      // A child process, not spawnSync: the restart it is compared with runs meanwhile.
      const once = ProxyProcess.start(scratch, ['--once', '--manifests', file, '--healthz-bind-address', '', '--metrics-bind-address', '', ...this.commonArgs()]);
      const { code, signal } = await once.exit;
      if (code !== 0) throw new Error(`reliability: the reference cold start failed (${code ?? signal}): ${once.raw.slice(-2000)}`);
      return this.kernelRuleset(scratch);
    } finally {
      scratch.remove();
      rmSync(file, { force: true });
    }
  }

  /**
   * Polls until the node's ruleset equals `reference` (by default a cold start of the objects as
   * they are now, which must not change meanwhile); resolves with the time it took and the polls
   * (each a whole `nft -j list ruleset`: at 10k services a poll takes seconds), or with the last
   * difference once `ms` have passed.
   */
  async converge(ms: number, reference?: CanonicalRuleset): Promise<{ ms: number; polls: number; diff: RulesetDiff }> {
    const want = reference ?? (await this.coldStartReference());
    const t0 = Date.now();
    // Not before the running proxy's first sync: a kernel that already matched must still match
    // after what the (re)started proxy writes.
    const proxy = this.proxy;
    while (proxy && !proxy.lines.some((l) => l.msg === 'synced' && l.family === 'ip') && Date.now() - t0 < ms) await sleep(50);
    for (let polls = 1; ; polls++) {
      const diff = diffRulesets(this.kernelRuleset(), want);
      if (diff.equal || Date.now() - t0 > ms) return { ms: Date.now() - t0, polls, diff };
      await sleep(200);
    }
  }

  async teardown(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (this.proxy) {
      await this.proxy.stop();
      liveProxies.delete(this.proxy);
    }
    await this.api.kill();
    this.cluster.remove();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The proxy process's figures from /proc: CPU seconds (user + system), RSS bytes, open fds. */
export function processFigures(pid: number): { cpuSeconds: number; rssBytes: number; fds: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return { cpuSeconds: ticks / CLOCK_TICKS, rssBytes: rssKb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** USER_HZ: 100 on every Linux architecture nftlink builds for. */
const CLOCK_TICKS = 100;
