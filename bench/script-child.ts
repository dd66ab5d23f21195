// A node script run as a process of its own in a namespace: the benchmarks' client loops and
// probers. It prints a marker once it runs, and its result last. That last write is read once the
// child's output is closed, not at its exit: when the process has exited, its pipe can still hold
// what it wrote last ('close' comes once stdout and stderr are drained).

import type { ChildProcess } from 'node:child_process';
import type { Netns } from '../src/netns/netns.js';

export interface ScriptEnd {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ScriptChild {
  child: ChildProcess;
  /** Resolves once stdout holds the marker, or once the child has ended (`ended` then says how). */
  ready: Promise<void>;
  /** Its exit code and all it wrote, once its output is closed. */
  ended: Promise<ScriptEnd>;
  /** What it has written to stdout so far. */
  stdout(): string;
}

export function startScript(ns: Netns, script: string, args: readonly string[], marker: string): ScriptChild {
  const child = ns.spawn(process.execPath, ['-e', script, ...args]);
  let stdout = '';
  let stderr = '';
  let markerSeen: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markerSeen = r));
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.includes(marker)) markerSeen();
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<ScriptEnd>((resolve) =>
    child.once('close', (code) => {
      markerSeen();
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, ready, ended, stdout: () => stdout };
}

/** The last line of what a script wrote: its result. */
export function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}
