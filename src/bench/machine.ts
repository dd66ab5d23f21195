// What the figures were measured on: they only mean something next to the kernel, nft and node
// versions and the core count (DESIGN.md's figures are Linux 6.18, nft 1.0.6, 2 cores).

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
  date: string;
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
    date: new Date().toISOString(),
  };
}
