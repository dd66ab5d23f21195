// A long-running `nftlink proxy` (not --once) for bench:process's churn cases: started as
// bin/nftlink.js starts it (its shebang's node flags, on the benchmark's copy of node:
// bench/measure.ts, measuredNode), in this process's namespace programming
// another (--netns), at -v 4 so that it logs a "synced" line per family and sync (src/proxy/
// proxier.ts); its servers are off (no port to collide with on a shared machine). Its resident
// memory is read from /proc/PID/status (VmRSS), the kernel's own count, as `kubectl top` sees it.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN } from '../../src/netns/proxy-process.js';
import { measuredEnv, measuredNode } from '../measure.js';
import { nodeFlags } from '../node-flags.js';

/**
 * The families the proxy syncs, each with its own "synced" line: both, always (the render's ip and
 * ip6 tables; an IPv4-only node still gets its ip6 table).
 */
const FAMILIES = 2;

/**
 * The process at the end of its first sync, from /proc when its last "synced" line was read: what
 * GNU time gives a process that exits (wall, user, sys, peak RSS), for one that goes on running.
 */
export interface FirstSync {
  wall: number;
  user: number;
  sys: number;
  /** VmHWM: the peak resident set so far, MB. */
  rssMB: number;
  operations: number;
  syncMs: number;
}

/** /proc/PID/stat counts CPU time in USER_HZ ticks, 100 a second on every architecture Linux exports it for. */
const USER_HZ = 100;

/** One sync of every family: its operations and duration, summed over the families. */
export interface SyncRound {
  /** When its last line was read, ms since the proxy was started. */
  atMs: number;
  operations: number;
  durationMs: number;
  /** Of durationMs, the commits (SyncResult.commitMs). */
  commitMs: number;
}

interface SyncedLine {
  msg: string;
  family: string;
  operations: number;
  durationMs: number;
  commitMs: number;
}

export class LiveProxy {
  readonly rounds: SyncRound[] = [];
  /** The heap collections the proxy logged (src/proxy/heap-compaction.ts): how long each held its event loop, ms. */
  readonly compactionMs: number[] = [];
  /**
   * Of each collection, why (after a big sync, or the RSS grew), when its line was read (ms since
   * the proxy was started) and the RSS it left, MB: what the proxy holds on to, without the
   * garbage between two collections.
   */
  readonly compactionFloors: { reason: string; atMs: number; rssAfterMB: number }[] = [];
  first: FirstSync | undefined;
  private open: SyncedLine[] = [];
  private stderrTail = '';
  /** Set when the proxy's log did not read as expected (thrown by syncs(), not in the stream handler). */
  private failure: Error | undefined;
  private readonly started = performance.now();
  private readonly exited: Promise<void>;
  private exitCode: number | null | undefined;

  private constructor(private readonly child: ChildProcess) {
    let buf = '';
    child.stderr!.on('data', (d: Buffer) => {
      const s = d.toString();
      this.stderrTail = (this.stderrTail + s).slice(-4000);
      buf += s;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        if (line.includes('"msg":"synced"')) this.synced(JSON.parse(line) as SyncedLine);
        else if (line.includes('"msg":"heap compacted"')) this.compacted(JSON.parse(line) as { reason: string; durationMs: number; rssAfterMB: number });
      }
    });
    this.exited = new Promise((r) => child.once('exit', (code) => ((this.exitCode = code), r())));
  }

  /** `nftlink proxy ARGS -v 4` with its servers off. */
  static start(args: readonly string[]): LiveProxy {
    const argv = [...nodeFlags(), BIN, 'proxy', ...args, '-v', '4', '--metrics-bind-address', '', '--healthz-bind-address', ''];
    return new LiveProxy(spawn(measuredNode(), argv, { stdio: ['ignore', 'ignore', 'pipe'], env: measuredEnv() }));
  }

  private compacted(l: { reason: string; durationMs: number; rssAfterMB: number }): void {
    this.compactionMs.push(l.durationMs);
    this.compactionFloors.push({ reason: l.reason, atMs: this.sinceStartMs(), rssAfterMB: l.rssAfterMB });
  }

  /** ms since the proxy was started (the clock of SyncRound.atMs and compactionFloors). */
  sinceStartMs(): number {
    return performance.now() - this.started;
  }

  private synced(l: SyncedLine): void {
    this.open.push(l);
    if (this.open.length < FAMILIES) return;
    const families = new Set(this.open.map((x) => x.family));
    if (families.size !== FAMILIES) this.failure ??= new Error(`bench: the proxy's synced lines are not one per family: ${JSON.stringify(this.open)}`);
    const round = { atMs: this.sinceStartMs(), operations: this.open.reduce((s, x) => s + x.operations, 0), durationMs: this.open.reduce((s, x) => s + x.durationMs, 0), commitMs: this.open.reduce((s, x) => s + x.commitMs, 0) };
    this.rounds.push(round);
    this.open = [];
    if (!this.first) this.first = { wall: round.atMs / 1000, ...this.cpu(), rssMB: this.status('VmHWM'), operations: round.operations, syncMs: round.durationMs };
  }

  /** Resident memory now, MB (VmRSS). */
  rssMB(): number {
    return this.status('VmRSS');
  }

  /** Of that, the pages of files (RssFile: the node executable's, mostly), MB. */
  fileMB(): number {
    return this.status('RssFile');
  }

  /** A memory field of /proc/PID/status, MB. */
  private status(field: 'VmRSS' | 'VmHWM' | 'RssFile'): number {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
    if (!m) throw new Error(`bench: no ${field} in /proc/${this.child.pid}/status`);
    return Number(m[1]) / 1024;
  }

  /** User and system CPU time so far, s (utime and stime: fields 14 and 15 of /proc/PID/stat). */
  private cpu(): { user: number; sys: number } {
    const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / USER_HZ, sys: Number(fields[12]) / USER_HZ };
  }

  /** Waits until `count` syncs have completed; fails if the proxy exits or `timeoutMs` passes. */
  async syncs(count: number, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (this.rounds.length < count) {
      if (this.failure) throw this.failure;
      if (this.exitCode !== undefined) throw new Error(`bench: the proxy exited (${this.exitCode}):\n${this.stderrTail}`);
      if (Date.now() > end) throw new Error(`bench: the proxy did not complete sync ${count} in ${timeoutMs / 1000} s:\n${this.stderrTail}`);
      await sleep(20);
    }
  }

  /** SIGTERM (the proxy stops cleanly), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}
