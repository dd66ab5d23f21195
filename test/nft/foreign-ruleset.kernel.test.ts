// Rulesets nftlink did not write: iptables-nft's (xtables matches and targets) and nft's own with
// expressions beyond what nftlink builds (rt, objref, socket, hash, quota, ct count, exthdr...).
// `nftlink list` prints them without error, what it prints loads back with `nft -f` where nft can
// load it (a rule holding an xt expression or an expression nftlink has no text for is listed as a
// comment), and a dumped rule written back over netlink is the same rule: iptables-nft's too, which
// iptables-nft-save then prints as it did.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuleset } from '../../src/cli/list.js';
import { NftCommitError, Nftables, Transaction, type Rule } from '../../src/index.js';
import { isXtExpr, xtExtensionName } from '../../src/nft/expr/unknown.js';
import { namespacesForFile } from '../helpers/netns.js';
import { BIN } from '../../src/netns/proxy-process.js';

const ns = namespacesForFile(afterAll);

/** The listing without the lines it lists as comments. */
const loadableLines = (text: string): string =>
  text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n');

describe('a ruleset written by iptables-nft', () => {
  const rules: string[][] = [
    ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '-m', 'multiport', '--dports', '22,80', '-m', 'comment', '--comment', 'web and ssh', '-j', 'ACCEPT'],
    ['iptables-nft', '-A', 'INPUT', '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'],
    ['iptables-nft', '-A', 'INPUT', '-m', 'limit', '--limit', '5/min', '-j', 'LOG', '--log-prefix', 'drop: '],
    ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '--dport', '25', '-j', 'REJECT', '--reject-with', 'tcp-reset'],
    ['iptables-nft', '-A', 'INPUT', '-i', 'lo', '-s', '198.18.0.1', '-m', 'mark', '--mark', '0x5', '-j', 'DROP'],
    ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '--dport', '8080', '-j', 'ACCEPT'],
    ['iptables-nft', '-t', 'nat', '-A', 'POSTROUTING', '-s', '198.18.0.0/24', '-o', 'eth0', '-j', 'MASQUERADE'],
    ['ip6tables-nft', '-A', 'INPUT', '-p', 'ipv6-icmp', '-j', 'ACCEPT'],
  ];

  it('lists without error, xt rules as comments, and the rest loads back with nft -f', async () => {
    const original = ns();
    for (const [cmd, ...args] of rules) original.exec(cmd!, args);
    const listed = await listRuleset({ netns: original.name });
    // The xt rules, as nft prints an expression it cannot translate, commented out.
    expect(listed).toContain('\t\t# meta l4proto tcp xt match "multiport" xt match "comment" counter packets 0 bytes 0 accept\n');
    expect(listed).toContain('\t\t# xt match "conntrack" counter packets 0 bytes 0 accept\n');
    expect(listed).toContain('\t\t# limit rate 5/minute burst 5 packets counter packets 0 bytes 0 xt target "LOG"\n');
    expect(listed).toContain('\t\t# oifname "eth0" ip saddr 198.18.0.0/24 counter packets 0 bytes 0 xt target "MASQUERADE"\n');
    // Native rules as nft lists them.
    expect(listed).toContain('\t\tiifname "lo" ip saddr 198.18.0.1 meta mark 0x00000005 counter packets 0 bytes 0 drop\n');
    expect(listed).toContain('\t\ttcp dport 8080 counter packets 0 bytes 0 accept\n');
    expect(listed).toContain('\t\tmeta l4proto ipv6-icmp counter packets 0 bytes 0 accept\n');

    const copy = ns();
    copy.nftApply(listed);
    // What loaded is exactly the listing's loadable part.
    expect(await listRuleset({ netns: copy.name })).toBe(loadableLines(listed));

    // The CLI as users run it: exit 0 and the same text.
    if (!existsSync(new URL('../../dist/bundle/cli.js', import.meta.url))) throw new Error('dist/ is missing: run npm run build:ts (scripts/test.sh does)');
    const cli = spawnSync(process.execPath, [BIN, 'list', '--netns', original.name], { encoding: 'utf8' });
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(cli.stdout).toBe(listed);
  });

  it('a dump of it serialises with JSON.stringify', async () => {
    const original = ns();
    for (const [cmd, ...args] of rules) original.exec(cmd!, args);
    const nft = Nftables.open({ netns: original.name });
    try {
      const dumped = await nft.dump();
      const json = JSON.parse(JSON.stringify(dumped)) as { rules: { exprs: { type: string; name?: string }[] }[] };
      const exprs = json.rules.flatMap((r) => r.exprs);
      expect(exprs.some((e) => e.type === 'unknown' && e.name === 'match')).toBe(true);
      // The kernel's 64-bit counters, as numbers.
      expect(exprs).toContainEqual({ type: 'counter', packets: 0, bytes: 0 });
    } finally {
      nft.close();
    }
  });
});

describe('iptables-nft rules written back over netlink', () => {
  const rules: string[][] = [
    ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '-m', 'comment', '--comment', 'x', '-m', 'multiport', '--dports', '80,443', '-j', 'ACCEPT'],
    ['iptables-nft', '-A', 'INPUT', '-m', 'conntrack', '--ctstate', 'ESTABLISHED', '-j', 'ACCEPT'],
    ['iptables-nft', '-A', 'INPUT', '-m', 'limit', '--limit', '5/min', '--limit-burst', '7', '-j', 'LOG', '--log-prefix', 'in: '],
    ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '-s', '198.18.0.0/15', '--dport', '25', '-j', 'REJECT', '--reject-with', 'tcp-reset'],
    ['iptables-nft', '-N', 'dns'],
    ['iptables-nft', '-A', 'dns', '-p', 'udp', '-m', 'multiport', '--sports', '53,5353', '-j', 'RETURN'],
    ['iptables-nft', '-A', 'INPUT', '-j', 'dns'],
    ['iptables-nft', '-A', 'FORWARD', '!', '-p', 'tcp', '-m', 'comment', '--comment', 'not tcp', '-j', 'REJECT'],
    ['iptables-nft', '-t', 'nat', '-A', 'POSTROUTING', '-s', '198.18.0.0/24', '-j', 'MASQUERADE'],
    ['ip6tables-nft', '-A', 'INPUT', '-p', 'tcp', '-s', '2001:db8::/32', '-m', 'multiport', '--dports', '80,443', '-j', 'REJECT'],
  ];

  /** iptables-nft-save and ip6tables-nft-save without their dated `#` lines, and nft's listing. */
  const snapshot = (n: ReturnType<typeof ns>): string =>
    ['iptables-nft-save', 'ip6tables-nft-save']
      .map((cmd) => n.exec(cmd, []).split('\n').filter((l) => !l.startsWith('#')).join('\n'))
      .join('') + n.nftList();

  const isXt = (e: Rule['exprs'][number]): boolean => e.type === 'unknown' && isXtExpr(e);

  it('a dump, its tables deleted and added back by nftlink, prints as before in iptables-nft-save and nft', async () => {
    const n = ns();
    for (const [cmd, ...args] of rules) n.exec(cmd!, args);
    const before = snapshot(n);
    expect(before).toContain('-A INPUT -p tcp -m comment --comment x -m multiport --dports 80,443 -j ACCEPT\n');
    expect(before).toContain('-A INPUT -s 198.18.0.0/15 -p tcp -m tcp --dport 25 -j REJECT --reject-with tcp-reset\n');
    const nft = Nftables.open({ netns: n.name });
    try {
      const dumped = await nft.dump();
      expect(dumped.rules.flatMap((r) => r.exprs).filter(isXt).length).toBeGreaterThanOrEqual(10);
      const tx = new Transaction();
      for (const table of dumped.tables) tx.delete({ table });
      for (const table of dumped.tables) tx.add({ table: { ...table, handle: undefined } });
      for (const chain of dumped.chains) tx.add({ chain: { ...chain, handle: undefined } });
      for (const rule of dumped.rules) tx.add({ rule: { ...rule, handle: undefined } });
      await nft.commit(tx);
      // The tables are new ones (their rules got new handles from 1)...
      const again = await nft.dump();
      expect(again.rules.map((r) => r.handle)).not.toEqual(dumped.rules.map((r) => r.handle));
    } finally {
      nft.close();
    }
    // ...holding what iptables-nft wrote, down to each extension's info.
    expect(snapshot(n)).toBe(before);
  });

  it('an xt expression with the wrong info length is refused, naming the rule, and changes nothing', async () => {
    const n = ns();
    for (const [cmd, ...args] of rules) n.exec(cmd!, args);
    const before = snapshot(n);
    const nft = Nftables.open({ netns: n.name });
    try {
      const dumped = await nft.dump();
      const isMultiport = (e: Rule['exprs'][number]): boolean => e.type === 'unknown' && xtExtensionName(e) === 'multiport';
      const rule = dumped.rules.find((r) => r.exprs.some(isMultiport))!;
      const INFO = 3; // NFTNL_EXPR_MT_INFO
      const longer = (info: Uint8Array): Uint8Array => Uint8Array.of(...info, 0, 0, 0, 0, 0, 0, 0, 0);
      const bad: Rule = {
        ...rule,
        handle: undefined,
        exprs: rule.exprs.map((e) => (e.type === 'unknown' && isMultiport(e) ? { ...e, attrs: e.attrs.map(([id, v]) => [id, id === INFO ? longer(v) : v] as const) } : e)),
      };
      const tx = new Transaction().add({ rule: { ...rule, handle: undefined } }).add({ rule: bad });
      const refused = await nft.commit(tx).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(NftCommitError);
      expect((refused as NftCommitError).code).toBe('EINVAL');
      expect((refused as NftCommitError).operationIndex).toBe(1);
      expect((refused as NftCommitError).message).toMatch(/^nftlink: kernel refused operation 1 \(# add rule ip filter INPUT .*xt match "multiport"/);
      expect((refused as NftCommitError).reason).toMatch(/^xt match "multiport" \(expression \d+\) was refused by the kernel's x_tables: its info is not the size/);

      // A name libnftnl would truncate is refused before anything is sent.
      const longName = { type: 'unknown', name: 'match', attrs: [[1, new TextEncoder().encode(`${'m'.repeat(30)}\0`)], [2, new Uint8Array(4)], [3, new Uint8Array(8)]] } as const;
      await expect(nft.commit(new Transaction().add({ rule: { ...rule, handle: undefined, exprs: [longName] } }))).rejects.toThrow(
        /match attribute 1 \(name\) is 31 bytes, at most 29 with its NUL/,
      );
    } finally {
      nft.close();
    }
    expect(snapshot(n)).toBe(before);
  });
});

// Objects the rules name: created by nft in both namespaces (named objects are read back by their
// own code, not by this test).
const OBJECTS = `table inet t {
	counter c1 {
	}
	quota q1 {
		25 mbytes
	}
}
`;

/** Rules nftlink lists as nft text. */
const PRINTED = [
  'rt classid 10 accept',
  'rt ip nexthop 198.18.0.1 accept',
  'rt ip6 nexthop 2001:db8::1 accept',
  'rt mtu 1500 accept',
  'counter name "c1"',
  'quota name "q1" drop',
  'socket transparent 1 accept',
  'socket mark 0x00000005 accept',
  'socket wildcard 0 accept',
  'jhash ip saddr mod 2 seed 0xdeadbeef offset 100 101 accept',
  'symhash mod 2 0 accept',
  'jhash ip saddr . tcp dport mod 4 seed 0x1 1 accept',
  'meta mark 0x00000010 accept',
  'meta mark set 0x00000020',
  'quota over 25 mbytes drop',
  'quota 1000 bytes used 0 bytes drop',
  'ct count over 10 drop',
  'notrack',
  'fib daddr type local accept',
  'numgen inc mod 2 0 accept',
  'tcp dport 80 redirect to :8080',
  'icmp type echo-request accept',
  'icmp type echo-reply icmp code net-unreachable accept',
  'icmpv6 type { nd-neighbor-solicit, nd-router-advert } accept',
  'tcp flags & (syn | ack) == syn accept',
  'tcp flags syn accept',
  'ip dscp cs1 accept',
  'ip6 dscp ef accept',
  'ip ttl 64 accept',
  'ip6 hoplimit 255 accept',
  'th dport 53 accept',
  'ct status dnat accept',
  'ct state new,established accept',
];
/** Rules nftlink has no text for: listed raw, as comments. */
const RAW = ['exthdr hbh exists drop', 'tcp option maxseg size 1400 accept'];

const chain = (rules: readonly string[]): string => `table inet t {\n\tchain c {\n${rules.map((r) => `\t\t${r}\n`).join('')}\t}\n}\n`;

describe('a ruleset nft wrote with expressions nftlink does not build', () => {
  it('lists without error and what it lists as nft text loads back to the same rules', async () => {
    const original = ns();
    original.nftApply(OBJECTS + chain([...PRINTED, ...RAW]));
    const listed = await listRuleset({ netns: original.name });
    expect(listed).toMatch(/\t\t# .*\[ exthdr .*\n/);
    expect(listed.match(/\t\t# /g)).toHaveLength(RAW.length);

    const copy = ns();
    copy.nftApply(OBJECTS);
    copy.nftApply(listed);
    const expected = ns();
    expected.nftApply(OBJECTS + chain(PRINTED));
    expect(copy.nftList()).toBe(expected.nftList());
  });

  it('a dumped rule, its unknown expressions raw, written back over netlink is the same rule', async () => {
    const original = ns();
    original.nftApply(OBJECTS + chain([...PRINTED, ...RAW]));
    const copy = ns();
    copy.nftApply(OBJECTS + chain([]));
    const from = Nftables.open({ netns: original.name });
    const to = Nftables.open({ netns: copy.name });
    try {
      const dumped = await from.dump();
      expect(dumped.rules.flatMap((r) => r.exprs).filter((e) => e.type === 'unknown').map((e) => (e.type === 'unknown' ? e.name : '')))
        .toEqual(expect.arrayContaining(['quota', 'connlimit', 'notrack', 'redir', 'exthdr']));
      const tx = new Transaction();
      for (const r of dumped.rules) tx.add({ rule: { ...r, handle: undefined } });
      await to.commit(tx);
    } finally {
      from.close();
      to.close();
    }
    expect(copy.nftList()).toBe(original.nftList());
  });
});
