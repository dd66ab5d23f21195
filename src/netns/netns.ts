// Network namespaces for the demo, the benchmarks and the tests: made with `ip netns add`, linked
// with veth pairs, always removed. Never the root namespace. (Product code reaches a namespace
// through the addon's open(netns); this module only sets up test hosts.)

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';

const live = new Set<Netns>();
let cleanupInstalled = false;
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', () => {
    for (const ns of live) spawnSync('ip', ['netns', 'delete', ns.name], { stdio: 'ignore' });
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const ns of live) spawnSync('ip', ['netns', 'delete', ns.name], { stdio: 'ignore' });
      process.exit(130);
    });
  }
}

export class Netns {
  private readonly children = new Set<ChildProcess>();
  private constructor(readonly name: string) {}

  static create(prefix = 'nftlink'): Netns {
    installCleanup();
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    execFileSync('ip', ['netns', 'add', name], { stdio: 'pipe' });
    const ns = new Netns(name);
    live.add(ns);
    ns.exec('ip', ['link', 'set', 'lo', 'up']);
    return ns;
  }

  /** Runs a command inside the namespace; throws with its stderr when it fails. */
  exec(cmd: string, args: string[], input?: string): string {
    const r = spawnSync('ip', ['netns', 'exec', this.name, cmd, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${this.name} failed (${r.status}): ${r.stderr || r.error?.message}`);
    return r.stdout;
  }

  /** Starts a long-running process inside the namespace; it is killed when the namespace is removed. */
  spawn(cmd: string, args: string[]): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.name, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
    return child;
  }

  /** `nft -f -` with the given text (tests and benchmarks use nft as the reference). */
  nftApply(text: string): void {
    this.exec('nft', ['-f', '-'], text);
  }

  /** `nft list ruleset`, with element expiry countdowns (which change every millisecond) removed. */
  nftList(): string {
    return this.exec('nft', ['list', 'ruleset']).replace(/ expires [0-9dhms]+/g, '');
  }

  /** Links this namespace to `peer` with a veth pair and gives each end an address (CIDR). */
  link(peer: Netns, local: { ifname: string; cidr: string }, remote: { ifname: string; cidr: string }): void {
    const tmp = `nl${randomBytes(3).toString('hex')}`;
    execFileSync('ip', ['link', 'add', tmp, 'type', 'veth', 'peer', 'name', `${tmp}p`], { stdio: 'pipe' });
    execFileSync('ip', ['link', 'set', tmp, 'netns', this.name, 'name', local.ifname], { stdio: 'pipe' });
    execFileSync('ip', ['link', 'set', `${tmp}p`, 'netns', peer.name, 'name', remote.ifname], { stdio: 'pipe' });
    for (const [ns, end] of [[this, local], [peer, remote]] as const) {
      const v6 = end.cidr.includes(':');
      ns.exec('ip', [...(v6 ? ['-6'] : []), 'addr', 'add', end.cidr, 'dev', end.ifname, ...(v6 ? ['nodad'] : [])]);
      ns.exec('ip', ['link', 'set', end.ifname, 'up']);
    }
  }

  remove(): void {
    if (!live.has(this)) return;
    live.delete(this);
    for (const c of this.children) c.kill('SIGKILL');
    spawnSync('ip', ['netns', 'delete', this.name], { stdio: 'ignore' });
  }
}
