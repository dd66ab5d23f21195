// Kernel tests get fresh namespaces from src/netns, and fail loudly without the privileges for them:
// in CI a kernel test that cannot run is a failure, never a skip.

import { spawnSync } from 'node:child_process';
import { Netns as BaseNetns } from '../../src/netns/netns.js';

let checked = false;
export function requirePrivileges(): void {
  if (checked) return;
  if (process.getuid?.() !== 0) {
    throw new Error('kernel tests need root (CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces); run them as root: sudo npm test');
  }
  checked = true;
}

export const Netns = {
  create(prefix = 'nftlink-t'): BaseNetns {
    requirePrivileges();
    return BaseNetns.create(prefix);
  },
};
export type Netns = BaseNetns;

/** Runs `fn` with fresh namespaces and removes them afterwards, also when it throws. */
export async function withNetns<T>(count: number, fn: (...ns: BaseNetns[]) => Promise<T> | T): Promise<T> {
  const list: BaseNetns[] = [];
  try {
    for (let i = 0; i < count; i++) list.push(Netns.create());
    return await fn(...list);
  } finally {
    for (const ns of list) ns.remove();
  }
}

/** Namespaces made on demand during a file's tests, all removed after them. */
export function namespacesForFile(afterAll: (fn: () => void) => void): () => BaseNetns {
  const made: BaseNetns[] = [];
  afterAll(() => made.forEach((n) => n.remove()));
  return () => {
    const n = Netns.create();
    made.push(n);
    return n;
  };
}

/** The namespaces named `prefix`-* present now (a benchmark probe's: each names its own, bench/netns.ts). */
export function benchNamespaces(prefix: string): string[] {
  return spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n.startsWith(`${prefix}-`));
}
