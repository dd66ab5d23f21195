// `nftlink monitor` against `nft monitor`, both watching one fresh namespace while transactions are
// committed there by nft and by nftlink: the same text, once what nft 1.0.6 prints differently is
// normalised (listed in normalizeNft).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { Nftables } from '../../src/index.js';
import { BIN as bin } from '../../src/netns/proxy-process.js';
import { kubeProxyShape } from '../fixtures/kube-proxy-shape.js';
import { Netns } from '../helpers/netns.js';

const made: Netns[] = [];
afterAll(() => made.forEach((n) => n.remove()));

/** A child's stdout and stderr as they grow. */
function collect(child: ChildProcess): { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return { out: () => out, err: () => err };
}

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** nftlink monitor's text, with maps deleted called sets as nft calls them. */
function normalizeOurs(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^delete map /, 'delete set '));
}

const NAMED_PRIORITIES: Record<string, number> = { raw: -300, mangle: -150, dstnat: -100, filter: 0, security: 50, srcnat: 100 };

/**
 * nft monitor's text in nftlink's words. What nft 1.0.6 prints differently:
 * - an appended rule's position (the handle of the rule before it) as ` handle N` after the chain;
 * - the deletion of an anonymous set (when its rule goes), which it never announced as added;
 * - an element's `expires` countdown; a trailing space after a set's declaration;
 * - base chain priorities by name (`priority filter`, `dstnat`): nftlink prints the number;
 * - `reject` for ip's default `reject with icmp port-unreachable`, which nftlink spells out;
 * - a DNAT to an address and port from a map as `dnat ip to ...`: nftlink writes the newer
 *   `dnat ip addr . port to ...` (nft 1.1);
 * - every deleted set as a set (the kernel's DELSET says nothing else): nftlink knows a map
 *   (normalizeOurs).
 */
function normalizeNft(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '' && !/^delete set \S+ \S+ (__set\d+|[0-9a-z]{4}_\d+)$/.test(l))
    .map((l) =>
      l
        .replace(/^((?:add|insert) rule \S+ \S+ \S+) handle \d+/, '$1')
        .replace(/ expires [0-9dhms]+/g, '')
        .replace(/^(add rule ip .*) reject( comment|$)/, '$1 reject with icmp port-unreachable$2')
        .replace(/ dnat (ip6?) to numgen /, ' dnat $1 addr . port to numgen ')
        .replace(/priority (raw|mangle|dstnat|filter|security|srcnat)( [+-] \d+)?;/, (_m, name: string, off?: string) => {
          const base = NAMED_PRIORITIES[name]!;
          const n = off ? base + (off.trim().startsWith('-') ? -1 : 1) * Number(off.replace(/[^0-9]/g, '')) : base;
          return `priority ${n};`;
        }),
    );
}

/** `nft monitor` and `nftlink monitor` in a fresh namespace, both started, and a connection to it. */
function startBothMonitors() {
  const ns = Netns.create();
  made.push(ns);
  const nftMon = ns.spawn('nft', ['monitor']);
  const ours = spawn(process.execPath, [bin, 'monitor', '--netns', ns.name], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { ns, nftMon, ours, a: collect(nftMon), b: collect(ours), nft: Nftables.open({ netns: ns.name }) };
}

/** Waits until both monitors print: nft monitor says nothing when it is ready, so a first transaction both must see. */
async function bothMonitorsStarted({ ns, a, b }: ReturnType<typeof startBothMonitors>): Promise<void> {
  await until('nftlink monitor to start', () => b.err().includes('watching'));
  for (let i = 0; ; i++) {
    ns.nftApply(`add table ip warm${i}\n`);
    await new Promise((r) => setTimeout(r, 100));
    if (a.out().includes(`add table ip warm${i}`) && b.out().includes(`add table ip warm${i}`)) return;
    if (i > 50) throw new Error(`the monitors did not start: ${a.out()} / ${b.out()}`);
  }
}

it('nftlink monitor prints what nft monitor prints, for transactions by nft and by nftlink', async () => {
  const m = startBothMonitors();
  const { ns, nftMon, ours, a, b, nft } = m;
  try {
    await bothMonitorsStarted(m);
    const start = [a.out().length, b.out().length] as const;
    ns.nftApply(`add table ip t
add chain ip t c { type filter hook input priority 0; policy accept; }
add chain ip t d
add set ip t s { type ipv4_addr; flags timeout; }
add map ip t m { type ipv4_addr : verdict; }
add element ip t s { 198.18.0.1 timeout 10s, 198.18.0.2 }
add element ip t m { 198.18.0.3 : jump d }
add rule ip t c ip daddr { 198.18.0.5, 198.18.0.6 } counter accept comment "hi"
add rule ip t c ip saddr @s drop
add rule ip t c ip daddr vmap @m
add set ip t r { type ipv4_addr; flags interval; }
add element ip t r { 198.18.0.0/24, 198.18.2.1-198.18.2.9, 198.18.3.3 }
`);
    ns.nftApply('delete element ip t s { 198.18.0.2 }\ndelete element ip t r { 198.18.0.0/24 }\n');
    ns.nftApply('insert rule ip t c tcp dport 80 accept\n');
    await nft.commit(kubeProxyShape('ip'));
    ns.nftApply('delete table ip t\n');
    ns.nftApply('delete table ip kube-proxy\n');
    const last = await nft.generation();
    const done = (s: string): boolean => s.includes(`# new generation ${last} `);
    await until('both monitors to print the last transaction', () => done(a.out()) && done(b.out()));
    const theirs = normalizeNft(a.out().slice(start[0]));
    const mine = normalizeOurs(b.out().slice(start[1]));
    expect(mine.filter((l) => l.startsWith('# new generation'))).toHaveLength(6);
    expect(mine).toEqual(theirs);
  } finally {
    nft.close();
    ours.kill('SIGINT');
    nftMon.kill();
  }
  // SIGINT ends nftlink monitor cleanly.
  const code = await new Promise<number | null>((r) => (ours.exitCode !== null ? r(ours.exitCode) : ours.on('exit', (c) => r(c))));
  expect(code).toBe(0);
});

it('nftlink monitor: usage errors exit 2, a missing namespace 1', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [bin, 'monitor', ...args], { encoding: 'utf8' });
  expect(run(['--table', 'inet']).status).toBe(2);
  expect(run(['extra']).status).toBe(2);
  const missing = run(['--netns', 'nftlink-no-such-namespace']);
  expect(missing.status).toBe(1);
  expect(missing.stderr).toMatch(/cannot open network namespace/);
});


/** The lines between the start offsets and the `# new generation G` line that ends transaction G. */
function transactionLines(lines: string[], generation: number): string[] {
  const end = lines.findIndex((l) => l.startsWith(`# new generation ${generation} `));
  if (end < 0) throw new Error(`no generation ${generation} in ${lines.join('\n')}`);
  let start = end - 1;
  while (start >= 0 && !lines[start]!.startsWith('# new generation ')) start--;
  // Anonymous sets are named by whoever creates them (nft: __setN; nftlink: generation_N).
  return lines.slice(start + 1, end).map((l) => l.replace(/__(set|map)\d+|\b[0-9a-z]{1,8}_\d+\b/g, 'ANON'));
}

it('the same changes committed by nftlink and by nft -f: nftlink monitor and nft monitor print the same lines for both', async () => {
  const m = startBothMonitors();
  const { ns, nftMon, ours, a, b, nft } = m;
  try {
    await bothMonitorsStarted(m);
    // The same transaction twice: committed by nftlink, the table deleted, then applied with nft -f.
    await nft.commit(kubeProxyShape('ip'));
    const byNftlink = await nft.generation();
    ns.nftApply('delete table ip kube-proxy\n');
    ns.nftApply(kubeProxyShape('ip').render());
    const byNft = await nft.generation();
    const done = (s: string): boolean => s.includes(`# new generation ${byNft} `);
    await until('both monitors to print the last transaction', () => done(a.out()) && done(b.out()));
    const theirs = normalizeNft(a.out());
    const mine = normalizeOurs(b.out());
    const reference = transactionLines(theirs, byNftlink);
    expect(reference.length).toBeGreaterThan(20);
    // nft monitor prints nft's transaction as it prints nftlink's ...
    expect(transactionLines(theirs, byNft)).toEqual(reference);
    // ... and nftlink monitor prints both as nft monitor does.
    expect(transactionLines(mine, byNftlink)).toEqual(reference);
    expect(transactionLines(mine, byNft)).toEqual(reference);
    // Who committed: nftlink's own process (node), then nft.
    expect(b.out()).toMatch(new RegExp(`# new generation ${byNft} by process \\d+ \\(nft\\)`));
  } finally {
    nft.close();
    ours.kill('SIGINT');
    nftMon.kill();
  }
});

it('nftlink monitor stopped during a burst the socket buffer cannot hold prints the resync line, then goes on', async () => {
  const ns = Netns.create();
  made.push(ns);
  const ours = spawn(process.execPath, [bin, 'monitor', '--netns', ns.name], { stdio: ['ignore', 'pipe', 'pipe'] });
  const b = collect(ours);
  try {
    await until('nftlink monitor to start', () => b.err().includes('watching'));
    ns.nftApply('add table ip t\nadd set ip t s { type ipv4_addr; }\n');
    await until('the first transaction', () => b.out().includes('add set ip t s'));
    // Stopped, it reads nothing: 2 x 65,536 element events with a 100-byte comment each, over 20 MB,
    // overflow the 8 MiB receive buffer it asked for (16 MiB once the kernel doubles it).
    ours.kill('SIGSTOP');
    const comment = `comment "${'x'.repeat(100)}"`;
    for (let burst = 0; burst < 2; burst++) {
      const elements = Array.from({ length: 65_536 }, (_, i) => `198.${18 + burst}.${i >> 8}.${i & 255} ${comment}`);
      ns.nftApply(`add element ip t s { ${elements.join(', ')} }\n`);
    }
    ours.kill('SIGCONT');
    const LOST = '# events lost (the monitor fell behind and the kernel dropped events): dump the ruleset to resync';
    await until('the resync line', () => b.out().includes(LOST), 60_000);
    // Committed once the gap is over (what came during it is gone, as the line says): printed.
    ns.nftApply('add table ip after\n');
    await until('the transaction after the loss', () => b.out().includes('add table ip after'));
    const lines = b.out().split('\n');
    const lost = lines.indexOf(LOST);
    expect(lost).toBeGreaterThan(0);
    // Not all of the burst was printed: the loss cut at least one of its transactions.
    expect(lines.filter((l) => l.startsWith('add element ip t s')).length).toBeLessThan(2 * 65_536);
    expect(lines.filter((l) => l.startsWith('# new generation')).length).toBeLessThan(4);
    expect(lines.indexOf('add table ip after')).toBeGreaterThan(lost);
  } finally {
    ours.kill('SIGCONT');
    ours.kill('SIGINT');
  }
}, 120_000);
