// The benchmark's TCP client and servers (tcp-probe.c): compiled once per run into a temporary
// directory, started inside the namespaces with nsenter (one setns(2), nothing else).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packagePath } from '../../src/package-root.js';
import { inNetns } from '../netns.js';

// From the package root: the compiled module runs from dist-bench/, the C source stays here.
const SOURCE = packagePath('bench', 'dataplane', 'tcp-probe.c');

export interface ProbeBinary {
  path: string;
  remove(): void;
}

/** `cc -O2` of tcp-probe.c; throws with the compiler's output when it fails or cc is missing. */
export function compileProbe(): ProbeBinary {
  const dir = mkdtempSync(join(tmpdir(), 'nftlink-dataplane-'));
  const path = join(dir, 'tcp-probe');
  const r = spawnSync('cc', ['-O2', '-Wall', '-Wextra', '-o', path, SOURCE], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`bench: compiling ${SOURCE} failed (Debian: apt-get install build-essential): ${r.stderr || r.error?.message}`);
  }
  const remove = (): void => {
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', remove);
  };
  process.on('exit', remove);
  return { path, remove };
}

// A process keeps its namespace alive after `ip netns delete`: every probe dies with the benchmark,
// however it ends (the namespace helpers' signal handlers end in process.exit, which runs this).
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Starts the probe inside a namespace, tracked so that it never outlives the benchmark. */
function startProbe(bin: ProbeBinary, netns: string, args: string[]): ChildProcess {
  const [cmd, ...pre] = inNetns(netns);
  const child = spawn(cmd!, [...pre, bin.path, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Starts `tcp-probe serve PORT` in a namespace; resolves once it listens. Stop it with child.kill(). */
export function startServer(bin: ProbeBinary, netns: string, port: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = startProbe(bin, netns, ['serve', String(port)]);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`tcp-probe serve in ${netns} exited (${code}): ${err}`)));
  });
}

export interface ConnectRun {
  /** Connect times in microseconds, in target order (NaN for a failed connect). */
  micros: number[];
  /** errno of each failed connect. */
  errors: number[];
  /** Their indices in the targets, parallel to `errors`. */
  failedAt: number[];
}

/** A connect from a client namespace (`ip netns` name) to IP:PORT. */
export interface Dial {
  netns: string;
  target: string;
}

/**
 * Connects to each target in turn from inside `netns`, after `warmup` untimed connects to the first.
 * Asynchronous, so that a signal can end the benchmark in the middle of a long batch.
 */
export function runConnects(bin: ProbeBinary, netns: string, targets: readonly string[], warmup: number, timeoutMs = 2000): Promise<ConnectRun> {
  return runDials(bin, targets.map((target) => ({ netns, target })), warmup, timeoutMs);
}

/**
 * The dials in turn, each from its own namespace, in one probe process (it enters the namespaces
 * itself, outside the timed part), after `warmup` untimed connects to the first target of each.
 */
export function runDials(bin: ProbeBinary, dials: readonly Dial[], warmup: number, timeoutMs = 2000): Promise<ConnectRun> {
  const netns = dials[0]?.netns;
  if (netns === undefined) return Promise.resolve({ micros: [], errors: [], failedAt: [] });
  // The probe starts in the first namespace (nsenter); with several, every target names its own.
  const several = dials.some((d) => d.netns !== netns);
  const args = dials.map((d) => (several ? `/run/netns/${d.netns}=${d.target}` : d.target));
  return new Promise((resolve, reject) => {
    const child = startProbe(bin, netns, ['connect', String(warmup), String(timeoutMs), ...args]);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`tcp-probe connect from ${netns} failed (${code}): ${err}`));
      const fields = out.trim().split(' ');
      if (fields.length !== dials.length) return reject(new Error(`tcp-probe connect: ${fields.length} results for ${dials.length} targets`));
      const errors: number[] = [];
      const failedAt: number[] = [];
      const micros = fields.map((f, i) => {
        if (f.startsWith('E')) {
          errors.push(Number(f.slice(1)));
          failedAt.push(i);
          return NaN;
        }
        return Number(f) / 1000;
      });
      resolve({ micros, errors, failedAt });
    });
  });
}
