// Scenarios 1 and 2 (issue 31): EndpointSlice churn through the informers under traffic. The proxy
// cold-starts with the node's services, then the API server changes `rate` slices a second for
// `durationS` while a client connects to the stable and the churned probed services; the process
// is sampled (CPU, RSS, fds, and with `countElements` the ruleset's elements) every `sampleMs`.
// The soak is the same run, longer. At the end the kernel is compared with a clean cold start of
// the final objects.

import { Nftables } from '../../src/index.js';
import type { Netns } from '../../src/netns/netns.js';
import { startClientLoop, type TargetTally } from './client-loop.js';
import { bucketsCount, bucketsDelta, histogramBuckets, histogramQuantile, trend, type Trend } from './figures.js';
import { processFigures, type ReliabilityNode } from './node.js';

export interface ChurnOptions {
  durationS: number;
  rate: number;
  sampleMs: number;
  /** Count the ruleset's elements at every sample (an `nft -j list ruleset` each time). */
  countElements: boolean;
  clientIntervalMs: number;
}

export interface Sample {
  /** Seconds since the churn started. */
  t: number;
  /** CPU use of the proxy process over the last interval, in % of one core. */
  cpuPercent: number;
  rssMB: number;
  fds: number;
  elements?: number;
}

export interface TargetResult {
  name: string;
  kind: string;
  address: string;
  ok: number;
  failed: number;
  failures: TargetTally['failures'];
}

export interface ChurnResult {
  services: number;
  coldStartMs: number;
  changes: number;
  churnMs: number;
  /** Changes per second achieved. */
  rate: number;
  targets: TargetResult[];
  failedStable: number;
  failedChurned: number;
  latency: { observations: number; p50s: number; p99s: number };
  cpuPercentMean: number;
  samples: Sample[];
  /** Least-squares trends over the samples after the first fifth of the run (figures.ts). */
  trends: { rssMB: Trend; fds: Trend; elements?: Trend };
  /** The kernel after the churn equals a clean cold start of the same objects. */
  model: { equal: boolean; convergedMs: number; polls: number; onlyKernel: string[]; onlyColdStart: string[] };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HISTOGRAM = 'kubeproxy_network_programming_duration_seconds';

/** The proxy's /metrics from inside the node namespace (127.0.0.1:10249, its default). */
export function scrapeProxyMetrics(node: Netns): string {
  return node.exec(process.execPath, ['-e', "fetch('http://127.0.0.1:10249/metrics').then(async (r) => { if (!r.ok) throw new Error('status ' + r.status); process.stdout.write(await r.text()); })"]);
}

/**
 * How many elements the namespace's sets and maps hold, read over netlink by the library: `nft -j
 * list ruleset` of a 10k-service table takes minutes on a loaded 2-core machine, and it would
 * block the sampler for all that time.
 */
export async function rulesetElements(nft: Nftables): Promise<number> {
  const r = await nft.dump();
  return r.sets.reduce((n, s) => n + (s.elements?.length ?? 0), 0);
}

export async function runChurn(node: ReliabilityNode, o: ChurnOptions, log: (line: string) => void = () => undefined): Promise<ChurnResult> {
  const t0 = Date.now();
  const proxy = node.startProxy();
  await node.waitServing(600_000);
  const coldStartMs = Date.now() - t0;
  log(`cold start of ${node.opts.services} services: stable services answer after ${coldStartMs} ms`);
  const pid = proxy.child.pid!;
  const ns = node.cluster.node;
  const before = histogramBuckets(scrapeProxyMetrics(ns), HISTOGRAM, 'ip_family="IPv4"');

  const targets = [...node.objects.stable, ...node.objects.churnedProbed];
  const loop = startClientLoop(node.cluster.client, targets.map((t) => t.address), o.clientIntervalMs);
  await loop.started;

  const samples: Sample[] = [];
  const churnStart = Date.now();
  let last = { at: churnStart, cpu: processFigures(pid).cpuSeconds };
  const nft = o.countElements ? Nftables.open({ netns: ns.name }) : undefined;
  let sampling = false;
  const sample = async (): Promise<void> => {
    // A sample still counting elements when the next is due: that one is skipped, not queued.
    if (sampling) return;
    sampling = true;
    const f = processFigures(pid);
    const at = Date.now();
    // The dump is retried while the table changes under it; a sample that cannot get one has no count.
    const elements = nft ? await rulesetElements(nft).catch(() => undefined) : undefined;
    samples.push({
      t: (at - churnStart) / 1000,
      cpuPercent: (100 * (f.cpuSeconds - last.cpu)) / ((at - last.at) / 1000),
      rssMB: f.rssBytes / 2 ** 20,
      fds: f.fds,
      ...(elements !== undefined ? { elements } : {}),
    });
    last = { at, cpu: f.cpuSeconds };
    sampling = false;
  };
  const sampler = setInterval(() => void sample(), o.sampleMs);
  await node.api.churn({ rate: o.rate, slices: node.objects.churn.bulk, probed: node.objects.churn.probed, probedShare: 0.1, pool: node.cluster.pods.map((p) => p.ipv4), pools: node.objects.churn.pools });
  for (let left = o.durationS * 1000; left > 0; left -= 60_000) {
    await sleep(Math.min(left, 60_000));
    const s = samples.at(-1);
    if (s) log(`  ${s.t.toFixed(0)} s: RSS ${s.rssMB.toFixed(0)} MB, CPU ${s.cpuPercent.toFixed(0)}%, fds ${s.fds}${s.elements !== undefined ? `, elements ${s.elements}` : ''}`);
  }
  const { changes, ms: churnMs } = await node.api.stopChurn();
  // The last changes' syncs (min-sync-period apart) before the loop stops and the histogram is read.
  await sleep(3000);
  clearInterval(sampler);
  while (sampling) await sleep(50);
  nft?.close();
  const tally = await loop.stop();
  const delta = bucketsDelta(before, histogramBuckets(scrapeProxyMetrics(ns), HISTOGRAM, 'ip_family="IPv4"'));

  const converged = await node.converge(120_000);
  const results: TargetResult[] = targets.map((t) => ({ ...t, ...tally[t.address]! }));
  const failedOf = (kind: (k: string) => boolean): number => results.filter((r) => kind(r.kind)).reduce((n, r) => n + r.failed, 0);
  // Trends leave out the first fifth of the run: the heap grows to its working size there.
  const steady = samples.filter((s) => s.t >= o.durationS / 5);
  const elements = steady.filter((s) => s.elements !== undefined).map((s) => ({ t: s.t, y: s.elements! }));
  return {
    services: node.opts.services,
    coldStartMs,
    changes,
    churnMs,
    rate: changes / (churnMs / 1000),
    targets: results,
    failedStable: failedOf((k) => k !== 'churned'),
    failedChurned: failedOf((k) => k === 'churned'),
    latency: { observations: bucketsCount(delta), p50s: histogramQuantile(0.5, delta), p99s: histogramQuantile(0.99, delta) },
    cpuPercentMean: samples.reduce((s, x) => s + x.cpuPercent, 0) / Math.max(1, samples.length),
    samples,
    trends: {
      rssMB: trend(steady.map((s) => ({ t: s.t, y: s.rssMB }))),
      fds: trend(steady.map((s) => ({ t: s.t, y: s.fds }))),
      ...(elements.length ? { elements: trend(elements) } : {}),
    },
    model: { equal: converged.diff.equal, convergedMs: converged.ms, polls: converged.polls, onlyKernel: converged.diff.onlyA, onlyColdStart: converged.diff.onlyB },
  };
}
