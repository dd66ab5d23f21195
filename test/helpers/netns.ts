// Fresh network namespaces for kernel tests: made with `ip netns add`, always removed, never the
// root namespace. Without root (or CAP_NET_ADMIN), kernel tests fail loudly in CI and skip nowhere.

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export class Netns {
  private constructor(readonly name: string) {}

  static create(prefix = 'nftlink-t'): Netns {
    requirePrivileges();
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    execFileSync('ip', ['netns', 'add', name], { stdio: 'pipe' });
    const ns = new Netns(name);
    live.add(ns);
    return ns;
  }

  /** Runs a command inside the namespace; throws with its stderr when it fails. */
  exec(cmd: string, args: string[], input?: string): string {
    const r = spawnSync('ip', ['netns', 'exec', this.name, cmd, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${this.name} failed (${r.status}): ${r.stderr}`);
    return r.stdout;
  }

  /** `nft -f -` with the given text. */
  nftApply(text: string): void {
    this.exec('nft', ['-f', '-'], text);
  }

  /** `nft list ruleset`, with element expiry countdowns (which change every millisecond) removed. */
  nftList(): string {
    return this.exec('nft', ['list', 'ruleset']).replace(/ expires [0-9dhms]+/g, '');
  }

  remove(): void {
    if (!live.has(this)) return;
    live.delete(this);
    spawnSync('ip', ['netns', 'delete', this.name], { stdio: 'pipe' });
  }
}

const live = new Set<Netns>();
process.on('exit', () => {
  for (const ns of live) spawnSync('ip', ['netns', 'delete', ns.name], { stdio: 'pipe' });
});

let checked = false;
export function requirePrivileges(): void {
  if (checked) return;
  if (process.getuid?.() !== 0) {
    throw new Error('kernel tests need root (CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces); run them as root: sudo npm test');
  }
  checked = true;
}

/** Runs `fn` with fresh namespaces and removes them afterwards, also when it throws. */
export async function withNetns<T>(count: number, fn: (...ns: Netns[]) => Promise<T> | T): Promise<T> {
  const list: Netns[] = [];
  try {
    for (let i = 0; i < count; i++) list.push(Netns.create());
    return await fn(...list);
  } finally {
    for (const ns of list) ns.remove();
  }
}
