// bench:process's churn cases, each a long-running proxy (live-proxy.ts) on a size of its own
// (--churn-size, 10k x 5 for issue 29), in a fresh namespace:
//
//   churn memory (target 7)  about --churn-services services changed every --churn-interval-ms (an
//                            endpoint replaced, added or removed: churn-state.ts) for
//                            --churn-seconds, through the manifest directory (a List file rewritten
//                            and renamed into place) or through the informers (upserts into the API
//                            server in this process); the proxy's RSS sampled every
//                            --churn-sample-ms from /proc, and its syncs from its log.
//   churn ratio (target 8)   --delta-changes single changes (one endpoint replaced, through the
//                            informers), each waited for: the proxy's sync time for it; against
//                            `nft -f` of the same change as its own process (nft-delta.ts: the
//                            difference of `nftlink render` before and after) on a namespace
//                            holding the same ruleset, forwards and back in turn.

import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { runTimed, waitQuiet } from '../measure.js';
import { inNetns, withNetns } from '../netns.js';
import type { ChurnSource } from './args.js';
import { BenchApiServer } from './apiserver.js';
import { ChurnFiles, EndpointChurn } from './churn-state.js';
import { informerFlags, proxyFlags, renderText, scratchFile } from './cases.js';
import { LiveProxy } from './live-proxy.js';
import { writeManifests } from './manifests.js';
import { nftDelta } from './nft-delta.js';

const NETNS_PREFIX = 'nftlink-pc';
/** How long a first sync (10k: seconds; 100k, kube-proxy's layout: minutes) may take. */
const FIRST_SYNC_TIMEOUT_MS = 30 * 60_000;
/**
 * After the first sync, before the first change: a cold start keys its elements in the background
 * (src/proxy/sync/family-sync.ts, half a second after), which is not a change's sync.
 */
const SETTLE_MS = 2000;

export interface ChurnOptions {
  services: number;
  endpoints: number;
  seconds: number;
  servicesPerTick: number;
  intervalMs: number;
  sampleMs: number;
}

export interface ChurnResult {
  source: ChurnSource;
  layout: LayoutName;
  services: number;
  endpoints: number;
  seconds: number;
  servicesPerTick: number;
  intervalMs: number;
  /** Ticks made and services changed (the ticks can fall behind on a busy machine). */
  ticks: number;
  changes: number;
  /** From the start to the end of the first sync, s, and the RSS then, MB. */
  firstSyncS: number;
  firstSyncRssMB: number;
  /**
   * RSS samples from the end of the first sync: seconds since then, MB, and of it the pages of
   * files (RssFile: the node executable's, mostly), which the proxy gives back once after its first
   * sync and which come back as its code paths run.
   */
  samples: { s: number; rssMB: number; fileMB: number }[];
  /** The syncs under churn: durations summed over the families, ms, and operations. */
  syncMs: number[];
  syncOperations: number[];
  /** The heap collections the proxy ran under churn (after its first sync's): each one's pause, ms. */
  compactionMs: number[];
  /**
   * Of the same collections, those the churn's growth set off (src/proxy/heap-compaction.ts; not
   * the one after the first sync, which finds no churn's working set yet): when (s since the first
   * sync, as samples) and the RSS each left, MB. The floor of the sawtooth: what the proxy retains
   * under churn. Absent in runs saved before it.
   */
  floors?: { s: number; rssMB: number }[];
}

/** A ChurnSource's way of making the changes, and the flags that point the proxy at it. */
interface Feed {
  flags(layout: LayoutName, netns: string): string[];
  changed(services: readonly number[]): void;
  stop(): Promise<void>;
}

async function feedOf(source: ChurnSource, churn: EndpointChurn, label: string): Promise<Feed> {
  if (source === 'informers') {
    const api = await BenchApiServer.start(churn.services, churn.perService);
    return {
      flags: (layout, netns) => informerFlags(api.kubeconfig, layout, netns),
      changed: (services) => {
        for (const i of services) api.setEndpoints(i, churn.endpointsOf(i));
      },
      stop: () => api.stop(),
    };
  }
  const files = await ChurnFiles.create(scratchFile(`churn-${label}`), churn);
  return { flags: (layout, netns) => proxyFlags(files.dir, layout, netns), changed: (services) => files.write(services), stop: async () => undefined };
}

export async function churnRun(source: ChurnSource, layout: LayoutName, o: ChurnOptions, log: (s: string) => void): Promise<ChurnResult> {
  const churn = new EndpointChurn(o.services, o.endpoints);
  const feed = await feedOf(source, churn, `${o.services}x${o.endpoints}-${source}-${layout}`);
  await waitQuiet(10_000);
  try {
    return await withNetns(
      1,
      async (ns) => {
        const started = performance.now();
        const proxy = LiveProxy.start(feed.flags(layout, ns!));
        try {
          await proxy.syncs(1, FIRST_SYNC_TIMEOUT_MS);
          const firstSyncS = (performance.now() - started) / 1000;
          const t0 = performance.now();
          const t0SinceStartMs = proxy.sinceStartMs();
          const compactionsBefore = proxy.compactionMs.length;
          const samples: ChurnResult['samples'] = [];
          const sample = (): void => {
            samples.push({ s: (performance.now() - t0) / 1000, rssMB: proxy.rssMB(), fileMB: proxy.fileMB() });
          };
          sample();
          const firstSyncRssMB = samples[0]!.rssMB;
          log(`  churn ${source} ${layout} ${o.services}x${o.endpoints}: first sync ${firstSyncS.toFixed(2)} s, ${firstSyncRssMB.toFixed(0)} MB`);
          const sampler = setInterval(sample, o.sampleMs);
          let ticks = 0;
          let changes = 0;
          try {
            const end = t0 + o.seconds * 1000;
            // Ticks on a fixed schedule: one that ran late is followed at once, not skipped.
            for (let next = t0; next < end; next += o.intervalMs) {
              const wait = next - performance.now();
              if (wait > 0) await sleep(wait);
              const services = churn.pick(o.servicesPerTick);
              for (const i of services) churn.change(i);
              feed.changed(services);
              ticks++;
              changes += services.length;
              if (ticks % Math.max(1, Math.round(60_000 / o.intervalMs)) === 0) log(`  churn ${source} ${layout}: ${((performance.now() - t0) / 1000).toFixed(0)} s, ${proxy.rounds.length - 1} syncs, ${samples[samples.length - 1]!.rssMB.toFixed(0)} MB`);
            }
            // The last changes' sync, then a last sample.
            await proxy.syncs(proxy.rounds.length + 1, 60_000);
          } finally {
            clearInterval(sampler);
          }
          sample();
          const under = proxy.rounds.slice(1);
          return {
            source,
            layout,
            services: o.services,
            endpoints: o.endpoints,
            seconds: o.seconds,
            servicesPerTick: o.servicesPerTick,
            intervalMs: o.intervalMs,
            ticks,
            changes,
            firstSyncS,
            firstSyncRssMB,
            samples,
            syncMs: under.map((r) => r.durationMs),
            syncOperations: under.map((r) => r.operations),
            compactionMs: proxy.compactionMs.slice(compactionsBefore),
            floors: proxy.compactionFloors
              .slice(compactionsBefore)
              .filter((c) => c.reason === 'growth')
              .map((c) => ({ s: (c.atMs - t0SinceStartMs) / 1000, rssMB: c.rssAfterMB })),
          };
        } finally {
          await proxy.stop();
        }
      },
      NETNS_PREFIX,
    );
  } finally {
    await feed.stop();
  }
}

export interface DeltaResult {
  layout: LayoutName;
  services: number;
  endpoints: number;
  /** The proxy's sync of each change (one endpoint replaced): ms summed over families, and operations. */
  syncMs: number[];
  syncOperations: number[];
  /** Of each sync, its commits' ms (the kernel's work for the batch: SyncResult.commitMs); absent in runs saved before it. */
  syncCommitMs?: number[];
  /** `nft -f` of the same change, whole process, s (forwards and back in turn). */
  nftWall: number[];
  nftUser: number[];
  nftSys: number[];
  /** The forward script's statements (nft-delta.ts). */
  deltaStatements: number;
}

/** The proxy's side of the churn ratio: `changes` single replacements, each waited for. */
async function proxyDeltas(layout: LayoutName, services: number, endpoints: number, changes: number, log: (s: string) => void): Promise<{ syncMs: number[]; syncOperations: number[]; syncCommitMs: number[] }> {
  const churn = new EndpointChurn(services, endpoints);
  const api = await BenchApiServer.start(services, endpoints);
  try {
    await waitQuiet(10_000);
    return await withNetns(
      1,
      async (ns) => {
        const proxy = LiveProxy.start(informerFlags(api.kubeconfig, layout, ns!));
        try {
          await proxy.syncs(1, FIRST_SYNC_TIMEOUT_MS);
          await sleep(SETTLE_MS);
          const syncMs: number[] = [];
          const syncOperations: number[] = [];
          const syncCommitMs: number[] = [];
          for (let c = 0; c < changes; c++) {
            const [i] = churn.pick(1);
            churn.replace(i!);
            const seen = proxy.rounds.length;
            api.setEndpoints(i!, churn.endpointsOf(i!));
            // A periodic sync (nothing to write) may come between: the change's is the one that writes.
            let r;
            for (let want = seen + 1; ; want++) {
              await proxy.syncs(want, 60_000);
              r = proxy.rounds[want - 1]!;
              if (r.operations > 0) break;
            }
            syncMs.push(r.durationMs);
            syncOperations.push(r.operations);
            syncCommitMs.push(r.commitMs);
          }
          log(`  churn ratio ${layout} ${services}x${endpoints}: proxy syncs ${syncMs.map((x) => x.toFixed(1)).join(' ')} ms`);
          return { syncMs, syncOperations, syncCommitMs };
        } finally {
          await proxy.stop();
        }
      },
      NETNS_PREFIX,
    );
  } finally {
    await api.stop();
  }
}

/** `nft -f` of one replacement's delta, forwards and back in turn, on a namespace holding the ruleset. */
async function nftDeltas(layout: LayoutName, services: number, endpoints: number, changes: number, log: (s: string) => void): Promise<{ wall: number[]; user: number[]; sys: number[]; statements: number }> {
  const label = `${services}x${endpoints}-delta`;
  const churn = new EndpointChurn(services, endpoints);
  const beforeDir = scratchFile(`${label}-before`);
  await writeManifests(beforeDir, services, endpoints);
  const before = renderText(beforeDir, layout, `${label}-before`);
  churn.replace(0);
  const afterDir = scratchFile(`${label}-after`);
  await writeManifests(afterDir, services, endpoints, (i) => churn.endpointsOf(i));
  const after = renderText(afterDir, layout, `${label}-after`);
  const beforeText = readFileSync(before, 'utf8');
  const afterText = readFileSync(after, 'utf8');
  const forward = scratchFile(`${label}-${layout}-forward.nft`);
  const back = scratchFile(`${label}-${layout}-back.nft`);
  writeFileSync(forward, nftDelta(beforeText, afterText));
  writeFileSync(back, nftDelta(afterText, beforeText));
  const statements = readFileSync(forward, 'utf8').split('\n').filter(Boolean).length;
  log(`  churn ratio ${layout}: the delta of one endpoint replaced is ${statements} statements (${forward})`);
  return withNetns(
    1,
    async (ns) => {
      await runTimed([...inNetns(ns!), 'nft', '-f', before], { discardStdout: true });
      await waitQuiet(10_000);
      const wall: number[] = [];
      const user: number[] = [];
      const sys: number[] = [];
      for (let c = 0; c < changes; c++) {
        const r = await runTimed([...inNetns(ns!), 'nft', '-f', c % 2 ? back : forward], { discardStdout: true });
        wall.push(r.wall);
        user.push(r.user);
        sys.push(r.sys);
      }
      // runTimed fails when nft refuses a script (an element to delete that is not there, say): the
      // deltas were exact, or nothing is reported.
      log(`  churn ratio ${layout}: nft -f of the delta ${wall.map((x) => (x * 1000).toFixed(1)).join(' ')} ms`);
      return { wall, user, sys, statements };
    },
    NETNS_PREFIX,
  );
}

export async function deltaRun(layout: LayoutName, services: number, endpoints: number, changes: number, log: (s: string) => void): Promise<DeltaResult> {
  const nft = await nftDeltas(layout, services, endpoints, changes, log);
  const proxy = await proxyDeltas(layout, services, endpoints, changes, log);
  return { layout, services, endpoints, ...proxy, nftWall: nft.wall, nftUser: nft.user, nftSys: nft.sys, deltaStatements: nft.statements };
}
