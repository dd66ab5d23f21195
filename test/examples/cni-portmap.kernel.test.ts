// nftlink-portmap (examples/cni-portmap) called as a container runtime calls CNI plugins, chained
// after Debian's containernetworking-plugins `bridge` and `host-local` (scripts/setup.sh installs
// them in /usr/lib/cni). The "host" is a namespace of the test's, the containers and an outside
// client are namespaces linked to it:
//
//   outside 198.19.0.2 ── 198.19.0.1 host  bridge cni-pm 198.18.10.1 ── 198.18.10.x c1, c2
//           2001:db8:19::2  2001:db8:19::1       2001:db8:10::1         2001:db8:10::x

import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, servePod, type Pod } from '../../src/netns/cluster.js';
import { Nftables, Transaction, type Rule } from '../../src/index.js';
import { Netns } from '../helpers/netns.js';
import { CniRuntime, runPlugin, type Attachment, type NetworkConfigList } from './cni-runtime.js';

const PLUGIN_DIR = join(import.meta.dirname, '../../examples/cni-portmap/bin');
const CNI_PATH = ['/usr/lib/cni', PLUGIN_DIR];
const HOST_V4 = '198.19.0.1';
const HOST_V6 = '2001:db8:19::1';
const BRIDGE_V4 = '198.18.10.1';

describe('nftlink-portmap chained after bridge + host-local', () => {
  let host: Netns;
  let outside: Netns;
  let dataDir: string;
  let runtime: CniRuntime;
  let list: NetworkConfigList;
  const spaces: Netns[] = [];
  const pods: Pod[] = [];
  let c1: Attachment;
  let c2: Attachment;
  // `nft list ruleset` of the host before any ADD, with c1 only, and with both.
  let rulesetBefore = '';
  let rulesetWithC1 = '';
  let rulesetWithBoth = '';

  const noDad = (ns: Netns) => ns.exec('sysctl', ['-qw', 'net.ipv6.conf.all.accept_dad=0', 'net.ipv6.conf.default.accept_dad=0']);
  const container = (name: string, portMappings: Attachment['portMappings']): Attachment => {
    const ns = Netns.create();
    spaces.push(ns);
    noDad(ns);
    return { containerId: `${name}-${ns.name}`, ifname: 'eth0', netns: ns, portMappings };
  };
  const serve = async (a: Attachment, name: string) => {
    const pod: Pod = { ns: a.netns, name, ipv4: '', ipv6: '', servers: [] };
    pods.push(pod);
    await servePod(pod, 80);
  };
  const answer = (from: Netns, addr: string, port: number) => {
    const p = probe(from, addr, port, { timeoutMs: 1500 });
    return { pod: p.answers[0], peer: p.peers[0] };
  };
  /** The attachment's rules as nftlink-portmap wrote them: the jumps into its chains carry its container ID. */
  const jumpsOf = async (a: Attachment): Promise<Rule[]> => {
    const nft = Nftables.open({ netns: host.name });
    try {
      return (await nft.dump({ family: 'inet', table: 'nftlink-portmap' })).rules.filter((r) => r.comment?.includes(a.containerId));
    } finally {
      nft.close();
    }
  };
  const jumpTarget = (r: Rule): string => {
    const e = r.exprs.at(-1)!;
    if (e.type !== 'immediate' || e.verdict?.kind !== 'jump') throw new Error('not a jump');
    return e.verdict.chain;
  };

  beforeAll(async () => {
    for (const p of ['bridge', 'host-local']) {
      if (!existsSync(`/usr/lib/cni/${p}`)) throw new Error(`/usr/lib/cni/${p} is missing: scripts/setup.sh installs Debian's containernetworking-plugins`);
    }
    if (!existsSync(join(PLUGIN_DIR, '../dist/main.js'))) throw new Error('examples/cni-portmap is not built: npm run build:ts && npm run build:cni-portmap');
    host = Netns.create();
    outside = Netns.create();
    spaces.push(host, outside);
    noDad(host);
    noDad(outside);
    host.link(outside, { ifname: 'eth0', cidr: `${HOST_V4}/24` }, { ifname: 'eth0', cidr: '198.19.0.2/24' });
    host.link(outside, { ifname: 'eth1', cidr: `${HOST_V6}/64` }, { ifname: 'eth1', cidr: '2001:db8:19::2/64' });
    dataDir = mkdtempSync(join(tmpdir(), 'nftlink-cni-'));
    list = {
      cniVersion: '1.0.0',
      name: 'pm-test',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni-pm',
          isDefaultGateway: true,
          hairpinMode: true,
          ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '198.18.10.0/24' }], [{ subnet: '2001:db8:10::/64' }]] },
        },
        { type: 'nftlink-portmap', capabilities: { portMappings: true } },
      ],
    };
    runtime = new CniRuntime(host, list, CNI_PATH);
    // Someone else's table, which nothing of the plugin's may touch.
    host.nftApply('table ip firewall {\n chain input {\n type filter hook input priority 0; policy accept;\n tcp dport 22 accept\n }\n}\n');
    rulesetBefore = host.nftList();
    c1 = container('c1', [
      { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
      { hostPort: 8443, containerPort: 80, protocol: 'tcp', hostIP: HOST_V4 },
    ]);
    c2 = container('c2', [
      { hostPort: 9090, containerPort: 80, protocol: 'tcp' },
      { hostPort: 8080, containerPort: 80, protocol: 'udp' },
    ]);
  });

  afterAll(() => {
    for (const p of pods) for (const s of p.servers) s.kill('SIGKILL');
    for (const ns of spaces.reverse()) ns.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('ADD passes the bridge result on and maps host ports to the container over IPv4 and IPv6', async () => {
    const [bridge, result] = await runtime.add(c1);
    expect(result).toEqual(bridge);
    expect(result!.cniVersion).toBe('1.0.0');
    const ips = result!.ips as { address: string }[];
    expect(ips.map((i) => i.address)).toEqual([expect.stringMatching(/^198\.18\.10\.\d+\/24$/), expect.stringMatching(/^2001:db8:10::[0-9a-f]+\/64$/)]);
    await serve(c1, 'c1');
    expect(answer(outside, HOST_V4, 8080)).toEqual({ pod: 'c1', peer: '198.19.0.2' });
    expect(answer(outside, HOST_V6, 8080)).toEqual({ pod: 'c1', peer: '2001:db8:19::2' });
    // hostIP limits a mapping to that address: 8443 answers on 198.19.0.1 only.
    expect(answer(outside, HOST_V4, 8443).pod).toBe('c1');
    expect(answer(outside, HOST_V6, 8443).pod).toMatch(/^error:/);
    expect(answer(host, BRIDGE_V4, 8443).pod).toMatch(/^error:/);
  });

  it('the host reaches the mapping itself: on its own addresses and on 127.0.0.1', () => {
    expect(answer(host, HOST_V4, 8080).pod).toBe('c1');
    expect(answer(host, HOST_V6, 8080).pod).toBe('c1');
    expect(answer(host, BRIDGE_V4, 8080).pod).toBe('c1');
    // From localhost the connection is masqueraded to the bridge's address on its way out.
    expect(answer(host, '127.0.0.1', 8080)).toEqual({ pod: 'c1', peer: BRIDGE_V4 });
  });

  it('a second container gets its own ports, and neighbours reach each other through host ports (hairpin)', async () => {
    rulesetWithC1 = host.nftList();
    await runtime.add(c2);
    await serve(c2, 'c2');
    expect(answer(outside, HOST_V4, 9090).pod).toBe('c2');
    expect(answer(outside, HOST_V4, 8080).pod).toBe('c1');
    // c2 -> host port of c1: masqueraded, so that c1 answers through the host and not straight to c2.
    expect(answer(c2.netns, HOST_V4, 8080)).toEqual({ pod: 'c1', peer: BRIDGE_V4 });
    expect(answer(c2.netns, HOST_V6, 8080)).toEqual({ pod: 'c1', peer: '2001:db8:10::1' });
    // c1 -> its own host port: back through the bridge port it came from (bridge hairpinMode).
    expect(answer(c1.netns, HOST_V4, 8080)).toEqual({ pod: 'c1', peer: BRIDGE_V4 });
    // A UDP mapping of the same host port number is c2's, TCP's stays c1's.
    expect(probe(outside, HOST_V4, 8080, { proto: 'udp', timeoutMs: 1500 }).answers).toEqual(['c2']);
    rulesetWithBoth = host.nftList();
  });

  it('CHECK passes for both, and reports a tampered mapping of one without touching the other', async () => {
    expect(await runtime.check(c1)).toBeUndefined();
    expect(await runtime.check(c2)).toBeUndefined();
    // Someone edits a mapping of c1 by hand: 8080 now goes to another address and port.
    const dnat = jumpTarget((await jumpsOf(c1)).find((r) => r.chain === 'hostports')!);
    const listed = host.exec('nft', ['-a', 'list', 'chain', 'inet', 'nftlink-portmap', dnat]);
    const handle = /ipv4 tcp dport 8080 .*# handle (\d+)/.exec(listed)![1]!;
    host.exec('nft', ['replace', 'rule', 'inet', 'nftlink-portmap', dnat, 'handle', handle, 'meta nfproto ipv4 tcp dport 8080 dnat ip to 198.18.10.99:81']);
    const run = await runtime.check(c1);
    expect(run?.code).toBe(1);
    expect(run?.json).toEqual({ cniVersion: '1.0.0', code: 101, msg: `port mappings of container ${c1.containerId} (eth0): the rules of chain ${dnat} differ from the mappings` });
    expect(await runtime.check(c2)).toBeUndefined();
    // nftlink-portmap's ADD again (alone: bridge refuses a second ADD) repairs it.
    expect((await runtime.runOne('nftlink-portmap', 'ADD', c1)).code).toBe(0);
    expect(await runtime.check(c1)).toBeUndefined();
    expect(answer(outside, HOST_V4, 8080).pod).toBe('c1');
  });

  it('CHECK reports a missing jump and a missing table', async () => {
    const snatJump = (await jumpsOf(c2)).find((r) => r.chain === 'postrouting')!;
    const nft = Nftables.open({ netns: host.name });
    try {
      await nft.commit(new Transaction().delete({ rule: snatJump }));
    } finally {
      nft.close();
    }
    expect(await runtime.check(c1)).toBeUndefined();
    expect((await runtime.check(c2))?.json).toMatchObject({ code: 101, msg: `port mappings of container ${c2.containerId} (eth0): chain postrouting does not jump to ${jumpTarget(snatJump)} exactly once` });
    expect((await runtime.runOne('nftlink-portmap', 'ADD', c2)).code).toBe(0);
    expect(await runtime.check(c2)).toBeUndefined();
    expect(host.nftList()).toBe(rulesetWithBoth);

    host.exec('nft', ['delete', 'table', 'inet', 'nftlink-portmap']);
    for (const a of [c1, c2]) {
      expect((await runtime.check(a))?.json).toMatchObject({ code: 101, msg: `port mappings of container ${a.containerId} (eth0): table inet nftlink-portmap does not exist` });
    }
    for (const a of [c1, c2]) expect((await runtime.runOne('nftlink-portmap', 'ADD', a)).code).toBe(0);
    expect(host.nftList()).toBe(rulesetWithBoth);
  });

  it('DEL removes exactly what ADD made, and a second DEL is fine', async () => {
    await runtime.del(c2);
    expect(host.nftList()).toBe(rulesetWithC1);
    expect(answer(outside, HOST_V4, 9090).pod).toMatch(/^error:/);
    expect(answer(outside, HOST_V4, 8080).pod).toBe('c1');
    await runtime.del(c2);
    expect(host.nftList()).toBe(rulesetWithC1);
    await runtime.del(c1);
    expect(host.nftList()).toBe(rulesetBefore);
    expect(answer(outside, HOST_V4, 8080).pod).toMatch(/^error:/);
    await runtime.del(c1);
    expect(host.nftList()).toBe(rulesetBefore);
  });
});

describe('nftlink-portmap alone, as a runtime calls it', () => {
  let host: Netns;
  const PLUGIN = 'nftlink-portmap';
  const base = { cniVersion: '1.0.0', name: 'pm-alone', type: PLUGIN };
  const prevResult = (i: number) => ({
    cniVersion: '1.0.0',
    interfaces: [{ name: 'eth0', mac: '02:00:00:00:00:01', sandbox: '/var/run/netns/none' }],
    ips: [{ interface: 0, address: `198.18.20.${10 + i}/24`, gateway: '198.18.20.1' }],
  });
  const mappings = (i: number) => ({ portMappings: [{ hostPort: 7000 + i, containerPort: 80, protocol: 'tcp' }] });
  const call = (command: string | undefined, conf: unknown, over: { containerId?: string; ifname?: string; unset?: string[] } = {}) =>
    runPlugin(
      host,
      PLUGIN,
      { command, containerId: over.containerId ?? 'alone-1', ifname: over.ifname ?? 'eth0', netns: '/var/run/netns/none', path: CNI_PATH, ...(over.unset ? { unset: over.unset } : {}) },
      typeof conf === 'string' ? conf : JSON.stringify(conf),
    );

  beforeAll(() => {
    host = Netns.create();
  });
  afterAll(() => host?.remove());

  it('VERSION answers with the versions it speaks, whichever version asks', async () => {
    for (const asked of ['0.4.0', '1.1.0']) {
      const run = await call('VERSION', { cniVersion: asked });
      expect([run.code, run.json]).toEqual([0, { cniVersion: '1.0.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0'] }]);
    }
  });

  const good = { ...base, runtimeConfig: mappings(0), prevResult: prevResult(0) };
  const cases: [string, string | undefined, unknown, { containerId?: string; ifname?: string; unset?: string[] }, number, RegExp][] = [
    ['no CNI_COMMAND', undefined, good, {}, 4, /^CNI_COMMAND is not set$/],
    ['a command the plugin does not have', 'GC', good, {}, 4, /^CNI_COMMAND "GC" is not one of ADD, DEL, CHECK, VERSION$/],
    ['no CNI_CONTAINERID', 'ADD', good, { unset: ['CNI_CONTAINERID'] }, 4, /^required environment variables missing: CNI_CONTAINERID$/],
    ['no CNI_NETNS on ADD', 'ADD', good, { unset: ['CNI_NETNS'] }, 4, /^required environment variables missing: CNI_NETNS$/],
    ['a container ID with a slash', 'ADD', good, { containerId: 'a/b' }, 4, /^CNI_CONTAINERID "a\/b" is not valid/],
    ['an interface name of 16 bytes', 'ADD', good, { ifname: 'eth0123456789012' }, 4, /^CNI_IFNAME "eth0123456789012" is not a valid interface name/],
    ['stdin that is not JSON', 'ADD', '{"cniVersion": "1.0.0",', {}, 6, /^the network configuration on stdin is not JSON$/],
    ['stdin that is a JSON list', 'ADD', '[1]', {}, 6, /^the network configuration on stdin is not a JSON object$/],
    ['a version it does not speak', 'ADD', { ...good, cniVersion: '2.0.0' }, {}, 1, /^cniVersion "2.0.0" is not supported/],
    ['CHECK in a version before CHECK', 'CHECK', { ...good, cniVersion: '0.3.1' }, {}, 1, /^cniVersion "0.3.1" has no CHECK/],
    ['no network name', 'ADD', { ...good, name: undefined }, {}, 7, /^name is missing/],
    ['host port 0', 'ADD', { ...good, runtimeConfig: { portMappings: [{ hostPort: 0, containerPort: 80 }] } }, {}, 7, /^runtimeConfig\.portMappings\[0\]\.hostPort takes a port number from 1 to 65535, not 0$/],
    ['a container port as text', 'ADD', { ...good, runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: '80' }] } }, {}, 7, /^runtimeConfig\.portMappings\[0\]\.containerPort takes a port number from 1 to 65535, not "80"$/],
    ['host port 65536', 'ADD', { ...good, runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80 }, { hostPort: 65536, containerPort: 80 }] } }, {}, 7, /^runtimeConfig\.portMappings\[1\]\.hostPort takes/],
    ['protocol icmp', 'ADD', { ...good, runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80, protocol: 'icmp' }] } }, {}, 7, /^runtimeConfig\.portMappings\[0\]\.protocol takes tcp, udp or sctp, not "icmp"$/],
    ['a hostIP that is no address', 'ADD', { ...good, runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80, hostIP: '198.18.0.300' }] } }, {}, 7, /^runtimeConfig\.portMappings\[0\]\.hostIP takes an IPv4 or IPv6 address/],
    ['ADD without prevResult', 'ADD', { ...good, prevResult: undefined }, {}, 7, /^prevResult is missing: nftlink-portmap is a chained plugin/],
    ['a prevResult address without prefix length', 'ADD', { ...good, prevResult: { ips: [{ address: '198.18.20.10' }] } }, {}, 7, /^prevResult\.ips\[0\]\.address takes an address with its prefix length/],
    ['snat as text', 'ADD', { ...good, snat: 'yes' }, {}, 7, /^snat takes true or false, not "yes"$/],
    ['upstream conditionsV4', 'ADD', { ...good, conditionsV4: ['ip saddr 198.18.0.0/15'] }, {}, 2, /^conditionsV4 is not supported by nftlink-portmap$/],
    ['the iptables backend', 'ADD', { ...good, backend: 'iptables' }, {}, 2, /^backend "iptables" is not supported/],
  ];
  it.each(cases)('%s: a CNI error object on stdout, exit non-zero, nothing written', async (_what, command, conf, over, code, msg) => {
    const before = host.nftList();
    const run = await call(command, conf, over);
    expect(run.code).toBe(1);
    const cniVersion = typeof conf === 'object' && conf !== null && typeof (conf as { cniVersion?: unknown }).cniVersion === 'string' ? (conf as { cniVersion: string }).cniVersion : '1.0.0';
    expect(run.json).toMatchObject({ cniVersion, code, msg: expect.stringMatching(msg) });
    expect(host.nftList()).toBe(before);
  });

  it('snat: false writes no masquerading, and a later ADD with it on adds it', async () => {
    const conf = (snat: boolean) => ({ ...base, snat, runtimeConfig: mappings(0), prevResult: prevResult(0) });
    expect((await call('ADD', conf(false))).code).toBe(0);
    expect((await call('CHECK', conf(false))).code).toBe(0);
    const without = host.exec('nft', ['list', 'table', 'inet', 'nftlink-portmap']);
    expect(without).not.toMatch(/masquerade|-snat/);
    expect((await call('ADD', conf(true))).code).toBe(0);
    expect(host.exec('nft', ['list', 'table', 'inet', 'nftlink-portmap'])).toMatch(/ct status dnat jump pm-[0-9a-f]{16}-snat[^]*ip saddr 198\.18\.20\.0\/24 ip daddr 198\.18\.20\.10 masquerade/);
    expect((await call('ADD', conf(false))).code).toBe(0);
    expect(host.exec('nft', ['list', 'table', 'inet', 'nftlink-portmap'])).toBe(without);
    expect((await call('DEL', base)).code).toBe(0);
    expect(host.nftList()).toBe('');
  });

  it('runs concurrently for many containers, and DEL needs neither runtimeConfig nor prevResult', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => i);
    const adds = await Promise.all(ids.map((i) => call('ADD', { ...base, runtimeConfig: mappings(i), prevResult: prevResult(i) }, { containerId: `alone-${i}` })));
    expect(adds.map((r) => [r.code, r.stdout.length > 0 ? 'result' : r.stdout])).toEqual(ids.map(() => [0, 'result']));
    const checks = await Promise.all(ids.map((i) => call('CHECK', { ...base, runtimeConfig: mappings(i), prevResult: prevResult(i) }, { containerId: `alone-${i}` })));
    expect(checks.map((r) => [r.code, r.stdout])).toEqual(ids.map(() => [0, '']));
    const listed = host.exec('nft', ['list', 'chain', 'inet', 'nftlink-portmap', 'hostports']);
    expect(listed.match(/jump pm-[0-9a-f]{16}-dnat/g)).toHaveLength(6);
    const dels = await Promise.all(ids.map((i) => call('DEL', base, { containerId: `alone-${i}` })));
    expect(dels.map((r) => [r.code, r.stdout])).toEqual(ids.map(() => [0, '']));
    expect(host.nftList()).toBe('');
    // DEL of what is gone: success, nothing printed.
    const again = await call('DEL', base, { containerId: 'alone-0' });
    expect([again.code, again.stdout]).toEqual([0, '']);
  });
});
