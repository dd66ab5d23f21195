// Scenario 3 (issue 31): kill -9 of `nftlink proxy` at random moments, then a restart. Trials take
// turns among four moments:
// - cold:    during a cold start (the node's tables deleted first, the proxy killed a random part
//            of the way through the time a cold start takes);
// - partial: during churn (50 slice changes a second: partial syncs), at a random moment;
// - stale:   after a batch of services is deleted, within the time their flushed chains wait to
//            be deleted (src/proxy/sync/stale-chains.ts: at least 1 s);
// - pins:    after the endpoints of affinity services change, while their stale pins are swept.
// After each kill the objects stop changing, the proxy is restarted, and the node's ruleset must
// come to equal a clean cold start of the same objects (compared by canonical dump, canonical.ts).
// Except for cold-start trials (whose tables were deleted on purpose), a client connects to the
// stable services from before the kill until the restart has converged: no attempt may fail.

import type { EndpointSlice } from '../../src/k8s/objects.js';
import { startClientLoop } from './client-loop.js';
import type { ReliabilityNode } from './node.js';
import { seededRandom } from '../seeded-random.js';

export const TRIAL_KINDS = ['cold', 'partial', 'stale', 'pins'] as const;
export type TrialKind = (typeof TRIAL_KINDS)[number];

export interface ChaosOptions {
  trials: number;
  /** How long a restart may take to converge before the trial counts as failed. */
  convergeTimeoutMs: number;
  /** Services deleted by each stale trial (restored after it). */
  staleBatch: number;
  clientIntervalMs: number;
  /** Seeded, so that a failing trial can be run again (mulberry32). */
  seed: number;
}

export interface TrialResult {
  trial: number;
  kind: TrialKind;
  /** When the kill came: ms after the proxy's start (cold) or after the change (others). */
  killAfterMs: number;
  /** From the reference being ready (the restart began with it) to the ruleset equal to it, after the restart's first sync. */
  convergedMs: number;
  /** Dumps compared until equal (1: equal at the first after the restart's first sync). */
  polls: number;
  equal: boolean;
  onlyKernel: string[];
  onlyColdStart: string[];
  /** Client attempts to stable services from before the kill to convergence (none for cold). */
  attempts: number;
  failed: number;
  failures: { target: string; at: number; why: string }[];
}

export interface ChaosResult {
  services: number;
  /** A clean cold start's time to the stable services answering, which sizes the cold trials' kill window. */
  coldStartMs: number;
  trials: TrialResult[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runChaos(node: ReliabilityNode, o: ChaosOptions, log: (line: string) => void = () => undefined): Promise<ChaosResult> {
  const random = seededRandom(o.seed);
  const ns = node.cluster.node;
  const t0 = Date.now();
  node.startProxy();
  await node.waitServing(600_000);
  const coldStartMs = Date.now() - t0;
  const targets = node.objects.stable.map((t) => t.address);
  const affinitySlices = node.objects.churn.bulk.filter((s) => node.objects.churn.pools[s.metadata!.name!]);
  const bulkServices = node.objects.services.filter((s) => s.metadata!.name!.startsWith('svc-'));
  const trials: TrialResult[] = [];

  for (let i = 0; i < o.trials; i++) {
    const kind = TRIAL_KINDS[i % TRIAL_KINDS.length]!;
    let killAfterMs = 0;
    let restore: (() => Promise<void>) | undefined;
    const loop = kind === 'cold' ? undefined : startClientLoop(node.cluster.client, targets, o.clientIntervalMs);
    await loop?.started;

    if (kind === 'cold') {
      await node.killProxy();
      ns.exec('nft', ['flush', 'ruleset']);
      killAfterMs = Math.round(random() * coldStartMs);
      node.startProxy();
      await sleep(killAfterMs);
    } else if (kind === 'partial') {
      await node.api.churn({ rate: 50, slices: node.objects.churn.bulk, probed: node.objects.churn.probed, probedShare: 0.1, pool: node.cluster.pods.map((p) => p.ipv4), pools: node.objects.churn.pools });
      killAfterMs = Math.round(300 + random() * 1700);
      await sleep(killAfterMs);
    } else if (kind === 'stale') {
      const start = Math.floor(random() * Math.max(1, bulkServices.length - o.staleBatch));
      const gone = bulkServices.slice(start, start + o.staleBatch);
      const slices = gone.map((s) => node.objects.slices.find((x) => x.metadata!.labels!['kubernetes.io/service-name'] === s.metadata!.name)!);
      await node.api.remove('endpointslices', slices);
      await node.api.remove('services', gone);
      // Stale chains are deleted at least 1 s after their flush: the window covers both sides.
      killAfterMs = Math.round(random() * 1600);
      await sleep(killAfterMs);
      restore = async () => {
        await node.api.upsert('services', gone);
        await node.api.upsert('endpointslices', slices);
      };
    } else {
      // Every affinity service's endpoints move within its own pool: their old pins go stale.
      const moved = affinitySlices.map((s) => movedWithinPool(s, node.objects.churn.pools[s.metadata!.name!]!, random));
      await node.api.upsert('endpointslices', moved);
      killAfterMs = Math.round(random() * 1200);
      await sleep(killAfterMs);
    }

    await node.killProxy();
    if (kind === 'partial') await node.api.stopChurn();
    // The restart and the reference cold start of the same (now fixed) objects run side by side.
    const referenceDone = node.coldStartReference();
    node.startProxy();
    const reference = await referenceDone;
    const converged = await node.converge(o.convergeTimeoutMs, reference);
    const tally = loop ? await loop.stop() : {};
    const stats = Object.entries(tally);
    const result: TrialResult = {
      trial: i + 1,
      kind,
      killAfterMs,
      convergedMs: converged.ms,
      polls: converged.polls,
      equal: converged.diff.equal,
      onlyKernel: converged.diff.onlyA,
      onlyColdStart: converged.diff.onlyB,
      attempts: stats.reduce((n, [, t]) => n + t.ok + t.failed, 0),
      failed: stats.reduce((n, [, t]) => n + t.failed, 0),
      failures: stats.flatMap(([target, t]) => t.failures.map((f) => ({ target, ...f }))).slice(0, 20),
    };
    trials.push(result);
    log(`trial ${i + 1}/${o.trials} ${kind}: killed after ${killAfterMs} ms, ${result.equal ? `converged in ${result.convergedMs} ms` : 'NOT converged'}, ${result.failed}/${result.attempts} client attempts failed`);
    await restore?.();
  }
  return { services: node.opts.services, coldStartMs, trials };
}

/** The slice with each endpoint moved to another address of its pool that it does not use. */
function movedWithinPool(slice: EndpointSlice, pool: readonly string[], random: () => number): EndpointSlice {
  const used = new Set(slice.endpoints?.map((e) => e.addresses?.[0]));
  const free = pool.filter((a) => !used.has(a));
  const out = structuredClone(slice);
  for (const e of out.endpoints ?? []) e.addresses = [free.splice(Math.floor(random() * free.length), 1)[0]!];
  // The next trial moves them on from here.
  slice.endpoints = structuredClone(out.endpoints);
  return out;
}
