// Fresh network namespaces for the benchmark: every run loads into empty namespaces it made itself,
// never into the root namespace's ruleset, and removes them again: after each case, on errors, and on
// SIGINT/SIGTERM (a benchmark interrupted halfway must not leave 10k-chain namespaces behind).

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

const live = new Set<string>();
let hooked = false;

function removeAll(): void {
  for (const name of [...live]) removeNetns(name);
}

function hookCleanup(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', removeAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      process.stderr.write(`\nbench: ${sig}, removing ${live.size} namespace(s)\n`);
      removeAll();
      process.exit(130);
    });
  }
}

/**
 * `ip netns add <prefix>-<random>` (each benchmark its own prefix, so a leftover names its owner);
 * throws with ip's stderr (no root, no iproute2) if it fails.
 */
export function createNetns(prefix = 'nftlink-b'): string {
  if (process.getuid?.() !== 0) throw new Error('bench: needs root (network namespaces and nf_tables need CAP_SYS_ADMIN and CAP_NET_ADMIN)');
  hookCleanup();
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const r = spawnSync('ip', ['netns', 'add', name], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench: ip netns add ${name} failed: ${r.stderr || r.error?.message}`);
  live.add(name);
  return name;
}

export function removeNetns(name: string): void {
  if (!live.has(name)) return;
  live.delete(name);
  spawnSync('ip', ['netns', 'delete', name], { stdio: 'ignore' });
}

/** Runs `fn` with `count` fresh namespaces and removes them afterwards, also when it throws. */
export async function withNetns<T>(count: number, fn: (...names: string[]) => Promise<T>, prefix?: string): Promise<T> {
  const names: string[] = [];
  try {
    for (let i = 0; i < count; i++) names.push(createNetns(prefix));
    return await fn(...names);
  } finally {
    for (const n of names) removeNetns(n);
  }
}

/**
 * The argv prefix that runs a command inside a namespace. nsenter only calls setns(2); `ip netns
 * exec` also makes a mount namespace and remounts /sys, a few ms per process that are not nft's
 * own work and would be charged to every `nft` run.
 */
export function inNetns(name: string): string[] {
  return ['nsenter', `--net=/run/netns/${name}`, '--'];
}
