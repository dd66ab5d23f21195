// What the figures were measured on: they only mean something next to the kernel, nft and node
// versions and the core count (docs/architecture.md's figures are Linux 6.18, nft 1.0.6, 2 cores), and next to
// how fast the VM runs that hour: the speed index.

import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  kernel: string;
  nft: string;
  libnftnl: string;
  node: string;
  cpuCount: number;
  cpuModel: string;
  memoryMB: number;
  loadAverage: number[];
  /**
   * Median ms of 3 fresh node processes building a 300,000-entry Map of small objects: allocation
   * and cache bound, like the sync engine. On this shared VM the same 10k cold start took 0.49 s
   * and 0.84 s an hour apart; the index is printed with every report so that runs made on
   * different phases can be told apart (new in this round: no history to compare with yet).
   */
  speedIndexMs: number;
  date: string;
}

const SPEED_WORKLOAD = `const t0 = performance.now(); const m = new Map();
for (let i = 0; i < 300000; i++) m.set('k' + i, { a: [i, String(i)], b: i * 2 });
let s = 0; for (const v of m.values()) s += v.b;
process.stdout.write(String(performance.now() - t0));`;

function speedIndexMs(): number {
  const runs = [0, 1, 2].map(() => Number(spawnSync(process.execPath, ['-e', SPEED_WORKLOAD], { encoding: 'utf8' }).stdout));
  return runs.sort((a, b) => a - b)[1]!;
}

/** "speed index 338 ms (lower is faster)", for the report headers. */
export function speedText(m: MachineInfo): string {
  return `speed index ${m.speedIndexMs.toFixed(0)} ms (lower is faster; bench/machine.ts)`;
}

function firstLine(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().split('\n')[0]! : `unknown (${cmd} ${args.join(' ')} failed)`;
}

export function machineInfo(): MachineInfo {
  const c = cpus();
  return {
    kernel: firstLine('uname', ['-r']),
    nft: firstLine('nft', ['--version']),
    libnftnl: firstLine('pkg-config', ['--modversion', 'libnftnl']),
    node: process.version,
    cpuCount: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    memoryMB: Math.round(totalmem() / 2 ** 20),
    loadAverage: loadavg(),
    speedIndexMs: speedIndexMs(),
    date: new Date().toISOString(),
  };
}
