// The fight (issue 32): another writer deletes the same element (the measured service's, in
// service-ips) every 100 ms, and the proxy repairs it, backs off, and says so once. The figure is
// the proxy process's CPU (user + sys, from /proc) during the fight against the same length of
// idle just before it, with how many repairs it made and how soon the element was back after the
// writer stopped.

import { readFileSync } from 'node:fs';
import { execFileSync, type SpawnSyncReturns } from 'node:child_process';
import type { RepairSetup } from './cluster.js';
import { SERVICE_ELEMENT_KEY } from './tamper.js';

export const FIGHT_INTERVAL_MS = 100;
/** Longer than the backoff's longest delay (a minute): the repair that comes after the fight. */
const RESTORE_TIMEOUT_MS = 70_000;
export const BACKOFF_LOG = 'another process keeps changing the tables; repairs back off';

export interface FightResult {
  seconds: number;
  /** The writer's deletes, and those that found the element gone already (not yet repaired). */
  deletes: number;
  deletesOfMissing: number;
  /** The proxy's CPU, ms of user + sys, idle and during the fight (same length), and as % of one core. */
  idleCpuMs: number;
  fightCpuMs: number;
  idleCpuPct: number;
  fightCpuPct: number;
  /** Repair syncs of table ip during the fight, and how many were full syncs. */
  repairs: number;
  fullRepairs: number;
  /** Times the proxy logged that it backs off (expected: 1). */
  backoffLogs: number;
  /** From the writer's last delete to the element being back (undefined: not within 70 s). */
  restoredMs?: number;
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a process, in ms (/proc/PID/stat fields 14 and 15, after the command's parentheses). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function fight(s: RepairSetup, seconds: number, inNode: (cmd: string, args: string[]) => SpawnSyncReturns<string>): Promise<FightResult> {
  const pid = s.proxy.child.pid;
  if (pid === undefined) throw new Error('bench: the proxy process has no pid');
  const element = ['ip', 'kube-proxy', 'service-ips', `{ ${SERVICE_ELEMENT_KEY} }`];
  const ms = seconds * 1000;
  // Idle first: also lets the repairs of earlier repetitions leave the backoff's window.
  const idle0 = cpuMs(pid);
  await sleep(ms);
  const idleCpuMs = cpuMs(pid) - idle0;

  const logFrom = s.proxy.lines.length;
  const fight0 = cpuMs(pid);
  const start = Date.now();
  let deletes = 0;
  let deletesOfMissing = 0;
  let lastDelete = start;
  for (let next = start; next < start + ms; next += FIGHT_INTERVAL_MS) {
    await sleep(Math.max(0, next - Date.now()));
    deletes++;
    lastDelete = Date.now();
    if (inNode('nft', ['delete', 'element', ...element]).status !== 0) deletesOfMissing++;
  }
  const fightCpuMs = cpuMs(pid) - fight0;
  const lines = s.proxy.lines.slice(logFrom);
  const repairs = lines.filter((l) => l.msg === 'synced' && l.family === 'ip' && (l.full === true || l.repaired !== undefined));
  let restoredMs: number | undefined;
  for (;;) {
    if (inNode('nft', ['get', 'element', ...element]).status === 0) {
      restoredMs = Date.now() - lastDelete;
      break;
    }
    if (Date.now() - lastDelete > RESTORE_TIMEOUT_MS) break;
    await sleep(50);
  }
  const pct = (cpu: number): number => Math.round((cpu / ms) * 1000) / 10;
  return {
    seconds,
    deletes,
    deletesOfMissing,
    idleCpuMs,
    fightCpuMs,
    idleCpuPct: pct(idleCpuMs),
    fightCpuPct: pct(fightCpuMs),
    repairs: repairs.length,
    fullRepairs: repairs.filter((l) => l.full === true).length,
    backoffLogs: s.proxy.lines.slice(logFrom).filter((l) => l.msg === BACKOFF_LOG).length,
    ...(restoredMs !== undefined ? { restoredMs } : {}),
  };
}

export function fightText(label: string, f: FightResult): string {
  return (
    `fight (${label}): ${f.deletes} deletes of one service-ips element in ${f.seconds} s (${f.deletesOfMissing} found it gone); ` +
    `proxy CPU ${f.fightCpuMs} ms (${f.fightCpuPct}% of a core) vs ${f.idleCpuMs} ms idle (${f.idleCpuPct}%); ` +
    `${f.repairs} repairs (${f.fullRepairs} full); backoff logged ${f.backoffLogs}x; element back ${f.restoredMs !== undefined ? `${f.restoredMs} ms` : 'never (70 s)'} after the last delete`
  );
}
