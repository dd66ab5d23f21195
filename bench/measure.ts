// How one run is measured: the process under GNU time (`/usr/bin/time -f '%e %U %S %M'`), so both
// sides (the nftlink child and `nft`) get their user time, sys time and peak RSS from the same
// source: the kernel's rusage of the process (and of what it waited for: the `sh` loop of shape 2
// sums its `nft` children). Wall time is taken here with a monotonic clock around the spawn, at
// sub-millisecond resolution (time's %e has only 10 ms).

import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const GNU_TIME = '/usr/bin/time';

export interface ProcessFigures {
  /** Seconds, measured by the parent around the process. */
  wall: number;
  /** CPU seconds in user space / in the kernel (rusage, 10 ms resolution). */
  user: number;
  sys: number;
  /** Peak resident set size, MB (rusage ru_maxrss; for several waited-for children, the largest). */
  rssMB: number;
}

export interface TimedResult extends ProcessFigures {
  stdout: string;
  stderr: string;
}

let scratch: string | undefined;
function scratchDir(): string {
  if (!scratch) {
    scratch = mkdtempSync(join(tmpdir(), 'nftlink-bench-time-'));
    const dir = scratch;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return scratch;
}
let seq = 0;

/**
 * The environment a measured process starts with: this one's without NODE_EXTRA_CA_CERTS. Node
 * reads the file that variable names at start-up, before any script runs
 * (node::crypto::UseExtraCaCerts); on the machine these figures come from it names the system
 * bundle of 144 certificates, and parsing them was 50 of the 80 ms of `node -e 0` (perf: 47% of
 * the samples under UseExtraCaCerts). No measured process opens a TLS connection, and the
 * DaemonSet's node has no such variable: left in, it would add the machine's set-up to every node
 * figure (and to none of nft's).
 */
const NODE_START_UP_NOISE = ['NODE_EXTRA_CA_CERTS'] as const;
export function measuredEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of NODE_START_UP_NOISE) delete env[name];
  return env;
}

let nodeCopy: string | undefined;

/**
 * The node that measured nftlink processes run on: a copy of this one, made once per benchmark.
 * On a node the proxy is the only process of its executable; here the benchmark is node too, and
 * the kernel does not reclaim a page of the executable that another process maps, which the
 * proxy's first collection asks it to (src/proxy/heap-compaction.ts): from the same file, the
 * proxy's RSS would keep the startup pages the benchmark shares with it.
 */
export function measuredNode(): string {
  if (!nodeCopy) {
    const copy = join(scratchDir(), 'node');
    copyFileSync(process.execPath, copy);
    nodeCopy = copy;
  }
  return nodeCopy;
}

/** For the report headers: which of those variables this run took out, if any. */
export function measuredEnvText(): string {
  const removed = NODE_START_UP_NOISE.filter((name) => process.env[name] !== undefined);
  return removed.length ? `; measured processes start without ${removed.join(', ')} (bench/measure.ts)` : '';
}

/**
 * Runs argv under GNU time and resolves with its figures; rejects (with stderr) when it fails, so a
 * refused load is never reported as a fast one.
 */
export function runTimed(argv: readonly string[], opts: { discardStdout?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<TimedResult> {
  const out = join(scratchDir(), `t${seq++}`);
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(GNU_TIME, ['-o', out, '-f', '%e %U %S %M', ...argv], {
      stdio: ['ignore', opts.discardStdout ? 'ignore' : 'pipe', 'pipe'],
      env: opts.env ?? measuredEnv(),
    });
    const so: Buffer[] = [];
    const se: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => so.push(b));
    child.stderr?.on('data', (b: Buffer) => se.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const wall = Number(process.hrtime.bigint() - start) / 1e9;
      const stdout = Buffer.concat(so).toString('utf8');
      const stderr = Buffer.concat(se).toString('utf8');
      if (code !== 0) {
        reject(new Error(`${argv.join(' ')} failed (${signal ?? code}):\n${stderr.slice(0, 4000)}`));
        return;
      }
      // time writes "Command exited with non-zero status" lines before the format line: take the last.
      const lines = readFileSync(out, 'utf8').trim().split('\n');
      rmSync(out, { force: true });
      const [, u, s, m] = lines[lines.length - 1]!.split(' ').map(Number);
      resolve({ wall, user: u!, sys: s!, rssMB: m! / 1024, stdout, stderr });
    });
  });
}

/** Only the wall time of a process (per-update `nft -f` runs: their rusage is mostly exec + parse). */
export function runWall(argv: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    const se: Buffer[] = [];
    child.stderr.on('data', (b: Buffer) => se.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = Number(process.hrtime.bigint() - start) / 1e9;
      if (code !== 0) reject(new Error(`${argv.join(' ')} failed (${code}): ${Buffer.concat(se).toString('utf8').slice(0, 2000)}`));
      else resolve(wall);
    });
  });
}

function cpuTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0); // idle + iowait
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}


/**
 * Waits until the machine is (nearly) idle before the next timed run. Deleting a namespace that
 * holds 10k chains and sets hands its teardown to a kernel workqueue (cleanup_net), which can keep
 * a core busy for seconds after `ip netns delete` returned (tens of seconds after kube-proxy's
 * layout at 30k); on a 2-core machine that would be charged to whichever run comes next. Gives up
 * after `maxMs`, saying so on stderr. Returns how busy (0..1) the last 250 ms were.
 */
export async function waitQuiet(maxMs = 60_000, busyBelow = 0.12): Promise<number> {
  const start = Date.now();
  let prev = cpuTicks();
  let busy = 1;
  for (;;) {
    await sleep(250);
    const now = cpuTicks();
    const dt = now.total - prev.total;
    if (dt > 0) busy = (now.busy - prev.busy) / dt;
    if (busy < busyBelow) break;
    if (Date.now() - start >= maxMs) {
      process.stderr.write(`bench: the machine is still ${(busy * 100).toFixed(0)}% busy after ${maxMs / 1000} s of waiting; measuring anyway\n`);
      break;
    }
    prev = now;
  }
  return busy;
}
