// `nftlink proxy` as a child process, as the demo, the benchmarks and the e2e tests run it: the real
// CLI (bin/nftlink.js), its JSON log lines collected from stderr.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { packagePath } from '../package-root.js';
import type { Netns } from './netns.js';

export const BIN = packagePath('bin', 'nftlink.js');

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** `nftlink proxy` running (inside a namespace, or here programming one with --netns). */
export class ProxyProcess {
  readonly lines: LogLine[] = [];
  raw = '';
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private constructor(readonly child: ChildProcess) {
    let buf = '';
    child.stderr!.on('data', (d: Buffer) => {
      const s = d.toString();
      this.raw += s;
      buf += s;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const p of parts) {
        try {
          this.lines.push(JSON.parse(p) as LogLine);
        } catch {
          // not a log line (an error message on exit)
        }
      }
    });
    this.exit = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  }

  /** Inside `ns` (`ip netns exec`), as on a node. */
  static start(ns: Netns, args: string[]): ProxyProcess {
    return new ProxyProcess(spawn('ip', ['netns', 'exec', ns.name, process.execPath, BIN, 'proxy', ...args], { stdio: ['ignore', 'ignore', 'pipe'] }));
  }

  /** In this process's namespace (with `--netns NAME` among `args`, it programs that one). */
  static startHere(args: string[]): ProxyProcess {
    return new ProxyProcess(spawn(process.execPath, [BIN, 'proxy', ...args], { stdio: ['ignore', 'ignore', 'pipe'] }));
  }

  logs(msg: string): LogLine[] {
    return this.lines.filter((l) => l.msg === msg);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exit;
    clearTimeout(timer);
  }
}

/** Runs `nftlink proxy ARGS` in `ns` to its end: exit code and stderr. */
export function runProxy(ns: Netns, args: string[], timeoutMs = 20_000): { code: number | null; stderr: string } {
  const r = spawnSync('ip', ['netns', 'exec', ns.name, process.execPath, BIN, 'proxy', ...args], { encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status, stderr: r.stderr };
}
