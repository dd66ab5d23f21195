// The contract: `nftlink render` of a fixture using every feature matches the reviewed golden
// ruleset of the layout under test (kube-proxy's nftables shapes, or the slots layout's), and the
// kernel accepts that text through nft -f. Regenerate after a reviewed layout change with
// UPDATE_GOLDEN=1 (once per layout: `NFTLINK_TEST_LAYOUT=kube-proxy` for the other).

import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { renderProxy } from '../../../src/cli/proxy.js';
import { Netns } from '../../helpers/netns.js';
import { runProxy } from '../../../src/netns/proxy-process.js';
import { recordingLogger, TEST_LAYOUT } from './helpers.js';

const fixture = new URL('../../fixtures/proxy/all-features', import.meta.url).pathname;
const golden = new URL(`../../fixtures/proxy/golden/all-features${TEST_LAYOUT === 'kube-proxy' ? '' : `.${TEST_LAYOUT}`}.nft`, import.meta.url).pathname;

const ARGS = [
  '--layout', TEST_LAYOUT,
  '--manifests', fixture,
  '--node-name', 'node',
  '--node-ip', '198.19.0.1,198.19.0.3,2001:db8:19::1',
  '--cluster-cidr', '198.18.0.0/16,2001:db8:100::/56',
  '--service-cidr', '198.18.200.0/24,2001:db8:200::/112',
  '--nodeport-addresses', '198.19.0.1/32,2001:db8:19::1/128',
];

describe('render contract (all features)', () => {
  const made: Netns[] = [];
  afterAll(() => made.forEach((n) => n.remove()));

  it('renders the golden ruleset, logging nothing', async () => {
    const log = recordingLogger();
    const text = await renderProxy(ARGS, log);
    expect(log.records.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
    if (process.env.UPDATE_GOLDEN) writeFileSync(golden, text);
    expect(text).toBe(readFileSync(golden, 'utf8'));
  });

  // The shapes both layouts share: dispatch, NodePorts, firewall, traffic policies, no-endpoint maps.
  const SHARED_SHAPES = [
    /add element ip kube-proxy service-nodeports \{ tcp \. 30080 : goto external-[A-Z2-7]{8}-shop\/np\/tcp\/http/, // NodePort
    /198\.19\.50\.1 \. tcp \. 80 : goto external-[A-Z2-7]{8}-shop\/np\/tcp\/http/, // ExternalIP
    /firewall-[A-Z2-7]{8}-shop\/lb\/tcp\/https ip saddr != \{ 198\.19\.0\.2, 203\.0\.113\.0\/24 \} drop/, // source ranges
    /add element ip kube-proxy firewall-ips \{ 198\.19\.50\.2 \. tcp \. 443 : goto firewall-/, // LB IP
    /external-[A-Z2-7]{8}-shop\/etp-local\/tcp\/http goto local-[A-Z2-7]{8}-shop\/etp-local\/tcp\/http$/m, // ETP Local
    /no-endpoint-services \{ 198\.18\.200\.33 \. tcp \. 80 comment "shop\/empty:http" : goto reject-chain \}/, // no endpoints
    /no-endpoint-nodeports \{ tcp \. 30082 comment "shop\/empty:http" : goto reject-chain \}/,
    /add element ip6 kube-proxy service-nodeports \{ tcp \. 30070 : goto external-[A-Z2-7]{8}-shop\/dual\/tcp\/http \}/, // dual-stack
    /add element ip kube-proxy nodeport-ips \{ 198\.19\.0\.1 \}/, // nodePortAddresses: not 198.19.0.3
    /add element ip6 kube-proxy nodeport-ips \{ 2001:db8:19::1 \}/,
  ];

  // What only kube-proxy's layout writes: an inline map per chain of two or more endpoints, a direct
  // DNAT for one (1.37), affinity through a chain and a timeout set per endpoint.
  const KUBE_PROXY_SHAPES = [
    /add chain ip kube-proxy service-[A-Z2-7]{8}-shop\/web\/tcp\/http$/m, // ClusterIP
    /198\.18\.200\.31 \. tcp \. 80 : goto local-[A-Z2-7]{8}-shop\/itp-local\/tcp\/http/, // ITP Local
    /add chain ip6 kube-proxy service-[A-Z2-7]{8}-shop\/six\/tcp\/http$/m, // IPv6
    /add set ip kube-proxy affinity-[A-Z2-7]{8}-shop\/sticky\/tcp\/http__198\.18\.10\.2\/8080 \{ type ipv4_addr; flags dynamic,timeout; timeout 5m; \}/, // affinity
    /endpoint-[A-Z2-7]{8}-shop\/sticky\/tcp\/http__198\.18\.11\.2\/8080 update @affinity-/,
    / numgen random mod 3 map \{ 0 : 198\.18\.10\.2 \. 8080, 1 : 198\.18\.11\.2 \. 8080, 2 : 198\.18\.12\.2 \. 8080 \}/, // not-ready left out
    /service-[A-Z2-7]{8}-shop\/single\/tcp\/ meta l4proto tcp dnat to 198\.18\.10\.2:8443$/m, // one endpoint (1.37: no map), unnamed port
    /local-[A-Z2-7]{8}-shop\/itp-local\/tcp\/http meta l4proto tcp dnat to 198\.18\.10\.2:8080$/m, // one local endpoint
    /service-[A-Z2-7]{8}-kube-system\/dns\/udp\/dns meta l4proto udp dnat/, // UDP
    /service-[A-Z2-7]{8}-telco\/signal\/sctp\/sctp meta l4proto sctp dnat to 198\.18\.12\.2:3868$/m, // SCTP
  ];

  // What only the slots layout writes: bucket maps, one numgen rule per chain, affinity in two
  // rules plus a pin chain, pins in a shared timeout map; and no chain for a port reached through
  // its ClusterIP alone: its bucket's balance chain for its protocol and endpoint count.
  const SLOTS_SHAPES = [
    /198\.18\.200\.10 \. tcp \. 80 : goto balance-0-tcp-3\b/, // ClusterIP
    /^add rule ip kube-proxy balance-0-tcp-3 dnat ip addr \. port to ip daddr \. meta l4proto \. tcp dport \. numgen random mod 3 map @balance-0$/m, // not-ready left out
    /add map ip kube-proxy balance-0 \{ typeof ip daddr \. meta l4proto \. th dport \. numgen random mod 1 : ip daddr \. tcp dport;/,
    /198\.18\.200\.31 \. tcp \. 80 : goto balance-0-tcp-1\b/, // ITP Local
    /198\.18\.200\.31 \. tcp \. 80 \. 0 : 198\.18\.10\.2 \. 8080,/, // its one local endpoint
    /^add rule ip kube-proxy balance-0-udp-2 dnat ip addr \. port to ip daddr \. meta l4proto \. udp dport \. numgen random mod 2 map @balance-0$/m, // UDP
    /^add rule ip kube-proxy balance-0-sctp-1 dnat ip addr \. port to ip daddr \. meta l4proto \. sctp dport \. numgen random mod 1 map @balance-0$/m, // SCTP
    /^add rule ip6 kube-proxy balance-0-tcp-2 dnat ip6 addr \. port to ip6 daddr \. meta l4proto \. tcp dport \. numgen random mod 2 map @balance-0$/m, // IPv6
    /service-[A-Z2-7]{8}-shop\/np\/tcp\/http meta l4proto tcp dnat ip addr \. port to numgen random mod 2( offset \d+)? map @endpoints-0$/m, // a NodePort's own chain
    /service-[A-Z2-7]{8}-shop\/sticky\/tcp\/http meta l4proto tcp dnat ip addr \. port to ip saddr \. \d+ map @pins-0$/m, // affinity
    /pin-[A-Z2-7]{8}-shop\/sticky\/tcp\/http update @pins-0 \{ ip saddr \. \d+ timeout 5m : ip daddr \. th dport \}$/m,
    /add map ip kube-proxy pins-0 \{ typeof ip saddr \. meta mark : ip daddr \. tcp dport; flags dynamic,timeout;/,
    /add element ip kube-proxy affinity-endpoints \{ 198\.18\.10\.2 \. tcp \. 8080 : jump pin-[A-Z2-7]{8}-shop\/sticky\/tcp\/http, 198\.18\.11\.2 \. tcp \. 8080 : jump pin-/,
    /add rule ip kube-proxy nat-postrouting ct status dnat ip daddr \. meta l4proto \. th dport vmap @affinity-endpoints/,
    /add map ip kube-proxy endpoints-0 \{ typeof numgen random mod 1 : ip daddr \. tcp dport; comment "endpoints of service chains, by slot"; \}/,
    /add map ip6 kube-proxy endpoints-0 \{ typeof numgen random mod 1 : ip6 daddr \. tcp dport;/, // IPv6
  ];

  it(`covers every feature the fixture names (${TEST_LAYOUT} layout)`, () => {
    const text = readFileSync(golden, 'utf8');
    if (TEST_LAYOUT === 'slots') {
      for (const shape of [...SHARED_SHAPES, ...SLOTS_SHAPES]) expect(text).toMatch(shape);
      // No anonymous endpoint maps: every chain picks from a bucket.
      expect(text).not.toMatch(/numgen random mod \d+ map \{/);
      return;
    }
    for (const shape of [...SHARED_SHAPES, ...KUBE_PROXY_SHAPES]) expect(text).toMatch(shape);
  });

  it('is accepted by the kernel through nft -f in a fresh namespace', () => {
    const ns = Netns.create('nlp-golden');
    made.push(ns);
    let text = readFileSync(golden, 'utf8');
    if (TEST_LAYOUT === 'slots') {
      // The affinity pin lookups key a map with `ip saddr . <id>`, a constant in a concatenation that
      // nft 1.0.6's parser cannot type ("Can't parse symbolic invalid expressions"): netlink writes
      // them (next test); everything else of the text must load.
      const pinLookup = /^add rule .* dnat ip6? addr \. port to ip6? saddr \. \d+ map @pins-\d+$/gm;
      expect(text.match(pinLookup)).toHaveLength(1);
      text = text.replace(pinLookup, '');
    }
    ns.exec('nft', ['-f', '-'], text);
    const listed = ns.nftList();
    expect(listed).toContain('table ip kube-proxy {');
    expect(listed).toContain('table ip6 kube-proxy {');
    expect(listed).toMatch(/chain nat-prerouting \{\n\t\ttype nat hook prerouting priority dstnat; policy accept;/);
    expect(listed).toMatch(/chain filter-prerouting-pre-dnat \{\n\t\ttype filter hook prerouting priority dstnat - 10; policy accept;/);
  });

  it('programmed over netlink, lists with `nft list ruleset` without an error, and a restart writes nothing', () => {
    const ns = Netns.create('nlp-golden');
    made.push(ns);
    const r = runProxy(ns, ['--once', ...ARGS]);
    expect(r.code, r.stderr).toBe(0);
    // A second proxy reads every object back (slots, affinity ids and pins maps included) and agrees.
    const again = runProxy(ns, ['--once', ...ARGS]);
    expect(again.code, again.stderr).toBe(0);
    expect([...again.stderr.matchAll(/"operations":(\d+)/g)].map((m) => m[1])).toEqual(['0', '0']);
    if (TEST_LAYOUT === 'kube-proxy') {
      // The restart read the inline maps without their elements and compared them by their digest.
      // One written by nft instead, with its endpoints swapped, has no digest: it is read whole,
      // found to differ, and rewritten; the next restart writes nothing again.
      const service = ns.exec('nft', ['-a', 'list', 'table', 'ip', 'kube-proxy']).match(/chain (service-\w+-shop\/np\/tcp\/http) \{ # handle \d+\n[^}]*?numgen random mod 2 map \{ 0 : ([\d.]+ \. \d+), 1 : ([\d.]+ \. \d+) \} # handle (\d+)/);
      expect(service).not.toBeNull();
      const [, chain, first, second, handle] = service!;
      ns.nftApply(`replace rule ip kube-proxy ${chain} handle ${handle} meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : ${second}, 1 : ${first} }\n`);
      const repaired = runProxy(ns, ['--once', ...ARGS]);
      expect(repaired.code, repaired.stderr).toBe(0);
      expect([...repaired.stderr.matchAll(/"operations":(\d+)/g)].map((m) => m[1])).toEqual(['1', '0']); // the one rule replaced by its handle
      expect(ns.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', chain!])).toContain(`numgen random mod 2 map { 0 : ${first}, 1 : ${second} }`);
      const third = runProxy(ns, ['--once', ...ARGS]);
      expect([...third.stderr.matchAll(/"operations":(\d+)/g)].map((m) => m[1])).toEqual(['0', '0']);
    }
    const listed = ns.nftList();
    expect(listed).toContain('table ip kube-proxy {');
    if (TEST_LAYOUT === 'slots') {
      // O(1) affinity: the pin lookup prints (nft shows the id with the wrong byte order, see README).
      expect(listed).toMatch(/dnat ip to ip saddr \. 0x[0-9a-f]+ \[invalid type\] map @pins-0/);
      expect(listed).toMatch(/update @pins-0 \{ ip saddr \. 0x0+1 timeout 5m : ip daddr \. th dport \}/);
    }
  });
});
