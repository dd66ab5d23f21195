// The processes `npm run bench:process` times, each in a fresh namespace of its own (bench/netns.ts)
// and measured from outside by GNU time (bench/measure.ts):
//   proxy     `nftlink proxy --once --manifests FILE`, started as bin/nftlink.js starts it (its
//             shebang's node flags), cold into an empty namespace, then again in the same namespace
//             (a restart over the table it programmed: what it writes must be nothing)
//   nft -f    `nft -f` of `nftlink render`'s text for the same manifests and flags (the very ruleset
//             the proxy writes; for --layout kube-proxy, kube-proxy's own shapes)
//   live      `nftlink proxy` (not --once), cold into an empty namespace, to the end of its first
//             sync (figures from /proc then), fed by the manifests or by the informers from an API
//             server in the benchmark's process (apiserver.ts: paged lists, then watches)
//   floor     the kernel committing that ruleset's batches encoded beforehand (floor-child.ts), and
//             a bare `node -e ''`: added up, what no Node process could go below
//   reads     node reading the same manifests with JSON.parse and nothing else (read-child.ts): with
//             the kernel's time, what no Node process that reads its input before it writes could
//             go below

import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { BIN } from '../../src/netns/proxy-process.js';
import { COMPACTION_DELAY_MS } from '../../src/proxy/heap-compaction.js';
import { packagePath } from '../../src/package-root.js';
import { measuredNode, runTimed, waitQuiet, type ProcessFigures } from '../measure.js';
import { inNetns, withNetns } from '../netns.js';
import { nodeFlags } from '../node-flags.js';
import { LiveProxy } from './live-proxy.js';
import { NODE_IP, NODE_NAME, POD_CIDR, SERVICE_CIDR, writeManifests } from './manifests.js';

// floor-child.ts, bundled as the CLI is (scripts/bundle.mjs --bench).
const FLOOR = packagePath('dist-bench', 'bundle', 'process-floor.js');
// read-child.ts imports only node's modules: compiled, not bundled.
const READ = packagePath('dist-bench', 'bench', 'process', 'read-child.js');
/**
 * How long to wait for an idle machine before each process (bench/measure.ts, waitQuiet): shorter
 * than its default, because on a shared machine other work can keep it busy for the whole run, and
 * the runs alternate sides so that such load falls on all of them alike.
 */
const QUIET_MAX_MS = 10_000;
const quiet = (): Promise<number> => waitQuiet(QUIET_MAX_MS);
/** This benchmark's namespaces: `ip netns list | grep nftlink-pb-` finds any it left behind. */
const NETNS_PREFIX = 'nftlink-pb';

export type Side = 'proxy' | 'restart' | 'live manifests' | 'live informers' | 'nft -f' | 'floor commit' | 'node -e' | 'node reads';

export interface ProcessRun extends ProcessFigures {
  services: number;
  endpoints: number;
  /** The layout the process wrote (node -e, node reads: none). */
  layout: LayoutName | '-';
  side: Side;
  run: number;
  /** proxy, restart and live: operations written (both families), and the syncs' durations as logged. */
  operations?: number;
  syncMs?: number;
  /**
   * live: this process's CPU time meanwhile, s: through the informers mostly the API server's
   * serving, which a loaded 2-core machine takes from the measured process's wall.
   */
  benchCpuS?: number;
  /**
   * live: resident memory once the proxy has settled after its first sync (the heap compaction
   * after a big sync done: src/proxy/heap-compaction.ts), MB (VmRSS).
   */
  idleRssMB?: number;
  /** floor commit: the kernel's commit of the batches, ms, measured around the addon's commit. */
  commitMs?: number;
  /**
   * How busy the machine was (0..1) in the 250 ms before the process started: on a shared machine
   * other work can take a core for the whole run, and the wall figures then say so here.
   */
  busy?: number;
}

let scratch: string | undefined;
export function scratchFile(name: string): string {
  if (!scratch) {
    scratch = mkdtempSync(join(tmpdir(), 'nftlink-bench-process-'));
    const dir = scratch;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return join(scratch, name);
}

/** The manifests of one size, written once per size (reading them is the process's work, not this). */
export async function manifestDir(services: number, endpoints: number): Promise<string> {
  const dir = scratchFile(`${services}x${endpoints}`);
  await writeManifests(dir, services, endpoints);
  return dir;
}

/**
 * The flags the proxy runs with: no cluster (--manifests), another namespace (--netns: no conntrack
 * sysctls, no localhost NodePorts, as docs/operating.md says), and the node's identity given, so that
 * nothing depends on the machine's interfaces.
 */
export function proxyFlags(manifests: string, layout: LayoutName, netns: string): string[] {
  return ['--manifests', manifests, ...identityFlags(layout, netns)];
}

/** The flags of a proxy that follows the API server of `kubeconfig` (BenchApiServer) instead. */
export function informerFlags(kubeconfig: string, layout: LayoutName, netns: string): string[] {
  return ['--kubeconfig', kubeconfig, ...identityFlags(layout, netns)];
}

function identityFlags(layout: LayoutName, netns: string): string[] {
  return ['--netns', netns, '--hostname-override', NODE_NAME, '--node-ip', NODE_IP, '--cluster-cidr', POD_CIDR, '--service-cidr', SERVICE_CIDR, '--layout', layout];
}

/**
 * `nftlink render` of the same manifests and flags into a file. render opens no namespace; it is
 * given one name only because --netns turns the localhost NodePorts off, as it does for the proxy.
 */
export function renderText(file: string, layout: LayoutName, label: string): string {
  const out = scratchFile(`${label}-${layout}.nft`);
  const fd = openSync(out, 'w');
  try {
    const r = spawnSync(process.execPath, [...nodeFlags(), BIN, 'render', ...proxyFlags(file, layout, `${NETNS_PREFIX}-render`)], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`nftlink render failed (${r.status ?? r.signal}): ${r.stderr.slice(0, 2000)}`);
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The proxy's "synced" log lines (one per family): operations written and sync durations, summed. */
export function syncedTotals(stderr: string): { operations: number; syncMs: number; families: number } {
  let operations = 0;
  let syncMs = 0;
  let families = 0;
  for (const line of stderr.split('\n')) {
    if (!line.includes('"msg":"synced"')) continue;
    const r = JSON.parse(line) as { operations: number; durationMs: number };
    operations += r.operations;
    syncMs += r.durationMs;
    families++;
  }
  return { operations, syncMs, families };
}

const figures = (r: ProcessFigures): ProcessFigures => ({ wall: r.wall, user: r.user, sys: r.sys, rssMB: r.rssMB });

/** The proxy cold into a fresh namespace, then restarted over the table it programmed. */
export async function proxyRuns(file: string, layout: LayoutName, services: number, endpoints: number, run: number): Promise<ProcessRun[]> {
  const busy = await quiet();
  return withNetns(
    1,
    async (ns) => {
      const argv = [measuredNode(), ...nodeFlags(), BIN, 'proxy', '--once', ...proxyFlags(file, layout, ns!)];
      const cold = await runTimed(argv, { discardStdout: true });
      // The load leaves kernel work behind (hash tables resize in deferred work): not the restart's.
      const busyAgain = await quiet();
      const again = await runTimed(argv, { discardStdout: true });
      const base = { services, endpoints, layout, run };
      const c = syncedTotals(cold.stderr);
      const a = syncedTotals(again.stderr);
      if (!c.families || !a.families) throw new Error(`proxy --once logged no "synced" line:\n${cold.stderr.slice(-2000)}`);
      return [
        { ...base, side: 'proxy', ...figures(cold), operations: c.operations, syncMs: c.syncMs, busy },
        { ...base, side: 'restart', ...figures(again), operations: a.operations, syncMs: a.syncMs, busy: busyAgain },
      ];
    },
    NETNS_PREFIX,
  );
}

/**
 * A long-running proxy (not --once) cold into a fresh namespace, to the end of its first sync (its
 * figures then, from /proc: live-proxy.ts), fed by the manifests or by the informers from the API
 * server of `kubeconfig` (in this process). Not --once: `proxy --once` through the informers syncs
 * before their first lists have arrived (it does not wait for the source to be synced).
 */
/** Time for the compaction's collection itself, after its delay: 0.2-0.3 s at 10k services, about ten times that at 100k. */
const settleMs = (services: number): number => Math.max(2500, services * 0.05);

export async function firstSyncRun(side: 'live manifests' | 'live informers', feed: string, layout: LayoutName, services: number, endpoints: number, run: number): Promise<ProcessRun> {
  const busy = await quiet();
  return withNetns(
    1,
    async (ns) => {
      const cpu = process.cpuUsage();
      const proxy = LiveProxy.start(side === 'live informers' ? informerFlags(feed, layout, ns!) : proxyFlags(feed, layout, ns!));
      let benchCpuS: number;
      let idleRssMB: number;
      try {
        await proxy.syncs(1, 30 * 60_000);
        const used = process.cpuUsage(cpu);
        benchCpuS = (used.user + used.system) / 1e6;
        // What an operator sees once it sits idle: after the compaction that follows a big sync.
        await sleep(COMPACTION_DELAY_MS + settleMs(services));
        idleRssMB = proxy.rssMB();
      } finally {
        await proxy.stop();
      }
      const { wall, user, sys, rssMB, operations, syncMs } = proxy.first!;
      return { services, endpoints, layout, run, side, wall, user, sys, rssMB, operations, syncMs, benchCpuS, idleRssMB, busy };
    },
    NETNS_PREFIX,
  );
}

export async function nftRun(text: string, layout: LayoutName, services: number, endpoints: number, run: number): Promise<ProcessRun> {
  const busy = await quiet();
  return withNetns(
    1,
    async (ns) => {
      const r = await runTimed([...inNetns(ns!), 'nft', '-f', text], { discardStdout: true });
      return { services, endpoints, layout, run, side: 'nft -f', ...figures(r), busy };
    },
    NETNS_PREFIX,
  );
}

export async function floorRun(file: string, layout: LayoutName, services: number, endpoints: number, run: number): Promise<ProcessRun> {
  const busy = await quiet();
  return withNetns(
    1,
    async (ns) => {
      const r = await runTimed([process.execPath, ...nodeFlags(), FLOOR, ns!, ...proxyFlags(file, layout, ns!)]);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { commitMs: number };
      return { services, endpoints, layout, run, side: 'floor commit', ...figures(r), commitMs: out.commitMs, busy };
    },
    NETNS_PREFIX,
  );
}

/** A bare node start, the other half of the floor (no flags: node's own start-up). */
export async function nodeStartRun(services: number, endpoints: number, run: number): Promise<ProcessRun> {
  const busy = await quiet();
  const r = await runTimed([process.execPath, '-e', ''], { discardStdout: true });
  return { services, endpoints, layout: '-', run, side: 'node -e', ...figures(r), busy };
}

/** Node reading the manifests and nothing else (read-child.ts), as the proxy runs: its copy of node, its flags. */
export async function readRun(dir: string, services: number, endpoints: number, run: number): Promise<ProcessRun> {
  const busy = await quiet();
  const r = await runTimed([measuredNode(), ...nodeFlags(), READ, dir]);
  const items = Number(r.stdout.trim());
  if (items !== 2 * services) throw new Error(`read-child read ${r.stdout.trim() || 'nothing'} items of ${dir}, not ${2 * services} (${r.stderr.slice(0, 500)})`);
  return { services, endpoints, layout: '-', run, side: 'node reads', ...figures(r), busy };
}
