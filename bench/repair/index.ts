// npm run bench:repair: how fast `nftlink proxy` repairs what another process does to its tables
// (issue 32). Per layout, a two-pod NodePort service, the real proxy process, and for each tamper
// kind N repetitions: a client connects to the ClusterIP and the NodePort every few ms while the
// tampering nft command runs in the node namespace; the figure is from that command's return to
// traffic working again (or, for a change that does not break traffic, to the proxy's repair sync).

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CLUSTER } from '../../src/netns/cluster.js';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { machineInfo, speedText } from '../machine.js';
import { inNetns } from '../netns.js';
import { parseRepairArgs, type RepairOptions } from './args.js';
import { CLUSTER_IP, NODE_PORT, SERVICE_PORT, startSetup, type RepairSetup } from './cluster.js';
import { startProbeLoop } from './probe-loop.js';
import { repairTime, trafficRecovery, unNATtedPorts, type RepOutcome, type SyncLine } from './recovery.js';
import { summarize, table, type KindResult } from './report.js';
import { TAMPER_KINDS, type TamperKind } from './tamper.js';

/** Attempts before the command: the loop is warm (its first connections are slower). */
const WARMUP_MS = 200;
/** After the command: longer than the max target, so a slow repair is a figure, not a cut-off. */
const OBSERVE_MS = 1500;

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
    .map((l) => ({ time: Date.parse(String(l.time)), family: String(l.family), full: l.full === true }));
}

async function rep(s: RepairSetup, kind: TamperKind, o: RepairOptions): Promise<RepOutcome> {
  const ns = s.cluster.node.name;
  const args = kind.args((a) => nft(ns, a));
  // conntrack -D exits 1 when nothing matched: not an error here.
  if (!o.keepConntrack) inNode(ns, 'conntrack', ['-D', '-d', CLUSTER_IP]);
  const loop = startProbeLoop(s.cluster.client, [`${CLUSTER_IP}:${SERVICE_PORT}`, `${CLUSTER.nodeIPv4}:${NODE_PORT}`], o.intervalMs, WARMUP_MS + OBSERVE_MS);
  await loop.started;
  await sleep(WARMUP_MS);
  const logFrom = s.proxy.lines.length;
  const cmdStart = now();
  nft(ns, args);
  const cmdReturn = now();
  const attempts = await loop.attempts;
  // Log times are whole ms: a sync in the command's first ms must not be missed.
  const repairMs = repairTime(syncLines(s, logFrom), Math.floor(cmdStart), cmdReturn);
  const round = (x: number): number => Math.round(x * 10) / 10;
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
  return { ...trafficRecovery(attempts, cmdStart, cmdReturn), ...(repairMs !== undefined ? { repairMs } : {}), failures, log };
}

async function runLayout(layout: LayoutName, o: RepairOptions): Promise<KindResult[]> {
  const s = await startSetup(layout);
  try {
    const out: KindResult[] = [];
    for (const kind of TAMPER_KINDS.filter((k) => k.layouts.includes(layout))) {
      const reps: RepOutcome[] = [];
      for (let i = 0; i < o.reps; i++) {
        const t0 = Date.now();
        reps.push(await rep(s, kind, o));
        const r = reps.at(-1)!;
        process.stderr.write(`${layout} / ${kind.name} ${i + 1}/${o.reps}: ${JSON.stringify({ failed: r.failed, trafficMs: r.trafficMs, repairMs: r.repairMs, failures: r.failures })}\n`);
        await sleep(Math.max(0, o.spacingMs - (Date.now() - t0)));
      }
      out.push({ layout, kind: kind.name, reps });
    }
    if (s.proxy.logs('another process keeps changing the tables; repairs back off').length) {
      process.stderr.write(`bench: the ${layout} proxy backed off during the run: raise --spacing-ms\n`);
    }
    return out;
  } finally {
    await s.teardown();
  }
}

async function main(): Promise<void> {
  const o = parseRepairArgs(process.argv.slice(2));
  const machine = machineInfo();
  const results: KindResult[] = [];
  for (const layout of o.layouts) results.push(...(await runLayout(layout, o)));
  const rows = results.map(summarize);
  console.log(
    `repair of outside changes: ${o.reps} reps each, probes every ${o.intervalMs} ms to the ClusterIP and the NodePort, ${o.spacingMs} ms apart, ` +
      (o.keepConntrack ? 'conntrack kept between reps' : "the ClusterIP's conntrack entries deleted before each rep"),
  );
  console.log(`${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} cores, ${speedText(machine)}`);
  console.log('measured: traffic = command return to the first connection after the last failed one; repair = command return to the proxy\'s full sync of table ip');
  console.log(table(rows));
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, JSON.stringify({ options: o, machine, summary: rows, results }, null, 2));
  console.log(`wrote ${o.out}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
