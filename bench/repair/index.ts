// npm run bench:repair: how fast `nftlink proxy` repairs what another process does to its tables
// (issue 32). Per layout, a two-pod NodePort service, the real proxy process, and for each tamper
// kind N repetitions: a client connects to the ClusterIP and the NodePort every few ms while the
// tampering nft command runs in the node namespace; the figure is from that command's return to
// traffic working again (or, for a change that does not break traffic, to the proxy's repair sync).
// Then the fight: another writer deletes one element every 100 ms, and the proxy's CPU is measured.
// With --size N the same again on a table of N more services: the cold start's own time against
// the repairs', and how many operations each repair wrote.

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CLUSTER } from '../../src/netns/cluster.js';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { machineInfo, speedText } from '../machine.js';
import { inNetns } from '../netns.js';
import { parseRepairArgs, type RepairOptions } from './args.js';
import { CLUSTER_IP, NODE_PORT, SERVICE_PORT, startSetup, untilServed, type RepairSetup } from './cluster.js';
import { BACKOFF_LOG, fight, fightText, type FightResult } from './fight.js';
import { startProbeLoop } from './probe-loop.js';
import { repairSync, trafficRecovery, unNATtedPorts, type RepOutcome, type SyncLine } from './recovery.js';
import { summarize, table, type KindResult } from './report.js';
import { TAMPER_KINDS, type TamperKind } from './tamper.js';

/** Attempts before the command: the loop is warm (its first connections are slower). */
const WARMUP_MS = 200;
/**
 * After the command: longer than the max target, so a slow repair is a figure, not a cut-off; with
 * --size, longer than a full sync of the big table (a flushed ruleset is a cold start).
 */
const OBSERVE_MS = 1500;
const OBSERVE_SIZED_MS = 5000;

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A command in the node namespace: nsenter, not `ip netns exec` (no mount namespace to make), so it returns as the command does. */
function inNode(ns: string, cmd: string, args: string[]): SpawnSyncReturns<string> {
  const [enter, ...rest] = inNetns(ns);
  return spawnSync(enter!, [...rest, cmd, ...args], { encoding: 'utf8' });
}

function nft(ns: string, args: string[]): string {
  const r = inNode(ns, 'nft', args);
  if (r.status !== 0) throw new Error(`bench: nft ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** The node's conntrack entries towards `vip` (conntrack -L; empty when there are none). */
function conntrack(ns: string, vip: string): string {
  return inNode(ns, 'conntrack', ['-L', '-d', vip]).stdout ?? '';
}

function syncLines(s: RepairSetup, from: number): SyncLine[] {
  return s.proxy.lines
    .slice(from)
    .filter((l) => l.msg === 'synced')
    .map((l) => ({
      time: Date.parse(String(l.time)),
      family: String(l.family),
      full: l.full === true,
      repaired: l.repaired !== undefined,
      operations: Number(l.operations),
      durationMs: Number(l.durationMs),
    }));
}

async function rep(s: RepairSetup, kind: TamperKind, o: RepairOptions, observeMs: number): Promise<RepOutcome> {
  const ns = s.cluster.node.name;
  // The previous repetition's repair is over (a flushed ruleset at 10k services takes a while).
  if (!(await untilServed(s.cluster, 120_000))) throw new Error(`bench: the service never answered again before ${kind.name}`);
  const args = kind.args((a) => nft(ns, a));
  // conntrack -D exits 1 when nothing matched: not an error here.
  if (!o.keepConntrack) inNode(ns, 'conntrack', ['-D', '-d', CLUSTER_IP]);
  const loop = startProbeLoop(s.cluster.client, [`${CLUSTER_IP}:${SERVICE_PORT}`, `${CLUSTER.nodeIPv4}:${NODE_PORT}`], o.intervalMs, WARMUP_MS + observeMs);
  await loop.started;
  await sleep(WARMUP_MS);
  const logFrom = s.proxy.lines.length;
  const cmdStart = now();
  nft(ns, args);
  const cmdReturn = now();
  const attempts = await loop.attempts;
  // Log times are whole ms: a sync in the command's first ms must not be missed.
  const round = (x: number): number => Math.round(x * 10) / 10;
  const sync = repairSync(syncLines(s, logFrom), Math.floor(cmdStart));
  const stale = unNATtedPorts(conntrack(ns, CLUSTER_IP), CLUSTER_IP);
  const failures = attempts
    .filter((a) => !a.ok && a.start >= cmdStart)
    .map((a) => ({ target: a.target, atMs: round(a.start - cmdReturn), tookMs: round(a.end - a.start), ...(a.why ? { why: a.why } : {}), ...(a.port ? { port: a.port, unNATted: stale.has(a.port) } : {}) }));
  const log = s.proxy.lines.slice(logFrom).map((l) => ({
    atMs: round(Date.parse(String(l.time)) - cmdReturn),
    msg: l.msg,
    ...(typeof l.family === 'string' ? { family: l.family } : {}),
    ...(typeof l.full === 'boolean' ? { full: l.full } : {}),
  }));
  const repair = sync ? { repairMs: sync.time - cmdReturn, repairSync: { full: sync.full, operations: sync.operations, durationMs: round(sync.durationMs) } } : {};
  return { ...trafficRecovery(attempts, cmdStart, cmdReturn), ...repair, failures, log };
}

interface SetupResult {
  label: string;
  kinds: KindResult[];
  /** The proxy's first sync of table ip: its own duration and operations. */
  coldStart?: { durationMs: number; operations: number };
  fight?: FightResult;
}

async function runSetup(layout: LayoutName, o: RepairOptions, extra?: { services: number; endpoints: number }): Promise<SetupResult> {
  const label = extra ? `${layout} +${extra.services}x${extra.endpoints}` : layout;
  const reps = extra ? o.sizeReps : o.reps;
  const s = await startSetup(layout, extra);
  try {
    // The service answers as soon as table ip is committed; its log line comes a moment later.
    for (const end = Date.now() + 60_000; Date.now() < end && !syncLines(s, 0).some((l) => l.family === 'ip'); ) await sleep(50);
    const first = syncLines(s, 0).find((l) => l.family === 'ip');
    const out: SetupResult = { label, kinds: [], ...(first ? { coldStart: { durationMs: first.durationMs, operations: first.operations } } : {}) };
    // Long enough to see a full sync of the big table to its end (it costs about a cold start).
    const observeMs = (kind: TamperKind): number => (extra ? Math.max(OBSERVE_SIZED_MS, kind.full ? 3 * (first?.durationMs ?? 0) : 0) : OBSERVE_MS);
    if (first) process.stderr.write(`${label}: cold start of table ip: ${first.operations} operations in ${first.durationMs.toFixed(1)} ms\n`);
    for (const kind of TAMPER_KINDS.filter((k) => k.layouts.includes(layout) && (!o.kinds || o.kinds.some((t) => k.name.includes(t))))) {
      const outcomes: RepOutcome[] = [];
      for (let i = 0; i < reps; i++) {
        const t0 = Date.now();
        outcomes.push(await rep(s, kind, o, observeMs(kind)));
        const r = outcomes.at(-1)!;
        process.stderr.write(`${label} / ${kind.name} ${i + 1}/${reps}: ${JSON.stringify({ failed: r.failed, trafficMs: r.trafficMs, repairMs: r.repairMs, repairSync: r.repairSync, failures: r.failures })}\n`);
        await sleep(Math.max(0, o.spacingMs - (Date.now() - t0)));
      }
      out.kinds.push({ layout: label, kind: kind.name, reps: outcomes });
    }
    if (s.proxy.logs(BACKOFF_LOG).length) process.stderr.write(`bench: the ${label} proxy backed off during the run: raise --spacing-ms\n`);
    if (o.fightS > 0) {
      out.fight = await fight(s, o.fightS, (cmd, args) => inNode(s.cluster.node.name, cmd, args));
      process.stderr.write(`${fightText(label, out.fight)}\n`);
    }
    return out;
  } finally {
    await s.teardown();
  }
}

async function main(): Promise<void> {
  const o = parseRepairArgs(process.argv.slice(2));
  const machine = machineInfo();
  const setups: SetupResult[] = [];
  for (const layout of o.layouts) {
    if (!(o.sizeOnly && o.size > 0)) setups.push(await runSetup(layout, o));
    if (o.size > 0) setups.push(await runSetup(layout, o, { services: o.size, endpoints: o.endpoints }));
  }
  const results: KindResult[] = setups.flatMap((x) => x.kinds);
  const rows = results.map(summarize);
  console.log(
    `repair of outside changes: ${o.reps} reps each, probes every ${o.intervalMs} ms to the ClusterIP and the NodePort, ${o.spacingMs} ms apart, ` +
      (o.keepConntrack ? 'conntrack kept between reps' : "the ClusterIP's conntrack entries deleted before each rep"),
  );
  console.log(`${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} cores, ${speedText(machine)}`);
  console.log(
    "measured: traffic = command return to the first connection after the last failed one; repair = command return to the proxy's repair sync of table ip (logged once committed); " +
      'repair sync: full (the whole table read back) or targeted (only the touched chains and sets), with its operations and its own duration',
  );
  console.log(table(rows));
  for (const x of setups) {
    if (x.coldStart) {
      const flush = rows.find((r) => r.layout === x.label && r.kind === 'flush ruleset');
      const ratio = flush ? ` ; flush ruleset repaired by a sync of ${flush.syncP50.toFixed(1)} ms p50 = ${(flush.syncP50 / x.coldStart.durationMs).toFixed(2)}x the cold start` : '';
      console.log(`${x.label}: cold start of table ip ${x.coldStart.durationMs.toFixed(1)} ms (${x.coldStart.operations} operations)${ratio}`);
    }
    if (x.fight) console.log(fightText(x.label, x.fight));
  }
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, JSON.stringify({ options: o, machine, summary: rows, setups: setups.map(({ kinds: _k, ...rest }) => rest), results }, null, 2));
  console.log(`wrote ${o.out}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
