// The cases of `npm run bench`, each in fresh namespaces (bench/netns.ts) and each side in its
// own process measured the same way (GNU time: wall, user, sys, peak RSS; bench/measure.ts):
// the proxy's sync engine over netlink (child.ts) and `nft -f` of the very text that engine renders.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { runTimed, waitQuiet } from '../measure.js';
import { nodeFlags } from '../node-flags.js';
import { inNetns, withNetns } from '../netns.js';
import type { ChurnKind } from './child.js';
import { packagePath } from '../../src/package-root.js';

// child.ts, bundled as the CLI is (scripts/bundle.mjs).
const CHILD = packagePath('dist-bench', 'bundle', 'scale-child.js');

export interface FullRun {
  layout: LayoutName;
  services: number;
  endpoints: number;
  side: 'netlink' | 'nft -f';
  run: number;
  wall: number;
  user: number;
  sys: number;
  rssMB: number;
  /** netlink: the proxy's sync duration (layout, diff, commit), seconds; operations written. */
  sync?: number;
  /** netlink: keying what a cold start wrote unkeyed, after the sync (the proxy does it in the background), seconds. */
  settle?: number;
  operations?: number;
}

export interface ChurnRecord {
  layout: LayoutName;
  kind: ChurnKind;
  count: number;
  syncMs: number[];
  operations: number[];
}

export interface RestartRecord {
  layout: LayoutName;
  services: number;
  endpoints: number;
  run: number;
  /** Read-back and diff of a fresh engine against the loaded table, seconds. */
  sync: number;
  operations: number;
  /** Peak RSS of the restarted engine's process (the dump and the model side by side). */
  rssMB: number;
}

const childArgs = (step: string, ns: string, layout: LayoutName, services: number, endpoints: number): string[] => [
  process.execPath,
  ...nodeFlags(),
  CHILD,
  step,
  ns,
  '--layout',
  layout,
  '--services',
  String(services),
  '--endpoints',
  String(endpoints),
];

let scratch: string | undefined;
function textFile(layout: LayoutName, services: number, endpoints: number): string {
  if (!scratch) {
    scratch = mkdtempSync(join(tmpdir(), 'nftlink-bench-scale-'));
    const dir = scratch;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return join(scratch, `${layout}-${services}x${endpoints}.nft`);
}

/** Renders the layout's full transaction once (rendering is not what `nft -f` is timed for). */
export async function renderText(layout: LayoutName, services: number, endpoints: number): Promise<string> {
  const file = textFile(layout, services, endpoints);
  await runTimed([...childArgs('render', '-', layout, services, endpoints), '--out', file]);
  return file;
}

export async function fullNetlink(layout: LayoutName, services: number, endpoints: number, run: number): Promise<FullRun> {
  await waitQuiet();
  return withNetns(1, async (ns) => {
    const r = await runTimed(childArgs('full', ns, layout, services, endpoints));
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { syncMs: number; settleMs: number; operations: number };
    return { layout, services, endpoints, side: 'netlink', run, wall: r.wall, user: r.user, sys: r.sys, rssMB: r.rssMB, sync: out.syncMs / 1000, settle: out.settleMs / 1000, operations: out.operations };
  });
}

export async function fullNft(layout: LayoutName, services: number, endpoints: number, run: number, file: string): Promise<FullRun> {
  await waitQuiet();
  return withNetns(1, async (ns) => {
    const r = await runTimed([...inNetns(ns), 'nft', '-f', file], { discardStdout: true });
    return { layout, services, endpoints, side: 'nft -f', run, wall: r.wall, user: r.user, sys: r.sys, rssMB: r.rssMB };
  });
}

/** A table loaded by one engine, then a fresh engine (a restarted proxy) reads it back and diffs. */
export async function restart(layout: LayoutName, services: number, endpoints: number, run: number): Promise<RestartRecord> {
  await waitQuiet();
  return withNetns(1, async (ns) => {
    await runTimed(childArgs('full', ns, layout, services, endpoints));
    // The load leaves kernel work behind (hash tables resize in deferred work): not the restart's.
    await waitQuiet();
    const r = await runTimed(childArgs('restart', ns, layout, services, endpoints));
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { syncMs: number; operations: number };
    return { layout, services, endpoints, run, sync: out.syncMs / 1000, operations: out.operations, rssMB: r.rssMB };
  });
}

export async function churn(layout: LayoutName, services: number, endpoints: number, counts: number[], repeats: number): Promise<ChurnRecord[]> {
  await waitQuiet();
  return withNetns(1, async (ns) => {
    const r = await runTimed([...childArgs('churn', ns, layout, services, endpoints), '--counts', counts.join(','), '--repeats', String(repeats)]);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { churn: Omit<ChurnRecord, 'layout'>[] };
    return out.churn.map((c) => ({ layout, ...c }));
  });
}
