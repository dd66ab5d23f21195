// The contract: `nftlink render` of a fixture using every feature matches the reviewed golden
// ruleset of the layout under test (kube-proxy's nftables shapes, or the slots layout's), and the
// kernel accepts that text through nft -f. Regenerate after a reviewed layout change with
// UPDATE_GOLDEN=1 (once per layout: `NFTLINK_TEST_LAYOUT=kube-proxy` for the other).

import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { renderProxy } from '../../src/cli/proxy.js';
import { Netns } from '../helpers/netns.js';
import { recordingLogger, TEST_LAYOUT } from './helpers.js';

const fixture = new URL('../fixtures/proxy/all-features/', import.meta.url).pathname;
const golden = new URL(`../fixtures/proxy/golden/all-features${TEST_LAYOUT === 'kube-proxy' ? '' : `.${TEST_LAYOUT}`}.nft`, import.meta.url).pathname;

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
    /add chain ip kube-proxy service-[A-Z2-7]{8}-shop\/web\/tcp\/http$/m, // ClusterIP
    /add element ip kube-proxy service-nodeports \{ tcp \. 30080 : goto external-[A-Z2-7]{8}-shop\/np\/tcp\/http/, // NodePort
    /198\.19\.50\.1 \. tcp \. 80 : goto external-[A-Z2-7]{8}-shop\/np\/tcp\/http/, // ExternalIP
    /firewall-[A-Z2-7]{8}-shop\/lb\/tcp\/https ip saddr != \{ 198\.19\.0\.2, 203\.0\.113\.0\/24 \} drop/, // source ranges
    /add element ip kube-proxy firewall-ips \{ 198\.19\.50\.2 \. tcp \. 443 : goto firewall-/, // LB IP
    /external-[A-Z2-7]{8}-shop\/etp-local\/tcp\/http goto local-[A-Z2-7]{8}-shop\/etp-local\/tcp\/http$/m, // ETP Local
    /198\.18\.200\.31 \. tcp \. 80 : goto local-[A-Z2-7]{8}-shop\/itp-local\/tcp\/http/, // ITP Local
    /add set ip kube-proxy affinity-[A-Z2-7]{8}-shop\/sticky\/tcp\/http__198\.18\.10\.2\/8080 \{ type ipv4_addr; flags dynamic,timeout; timeout 5m; \}/, // affinity
    /endpoint-[A-Z2-7]{8}-shop\/sticky\/tcp\/http__198\.18\.11\.2\/8080 update @affinity-/,
    /no-endpoint-services \{ 198\.18\.200\.33 \. tcp \. 80 comment "shop\/empty:http" : goto reject-chain \}/, // no endpoints
    /no-endpoint-nodeports \{ tcp \. 30082 comment "shop\/empty:http" : goto reject-chain \}/,
    /add chain ip6 kube-proxy service-[A-Z2-7]{8}-shop\/six\/tcp\/http$/m, // IPv6
    /add element ip6 kube-proxy service-nodeports \{ tcp \. 30070 : goto external-[A-Z2-7]{8}-shop\/dual\/tcp\/http \}/, // dual-stack
    /add element ip kube-proxy nodeport-ips \{ 198\.19\.0\.1 \}/, // nodePortAddresses: not 198.19.0.3
    /add element ip6 kube-proxy nodeport-ips \{ 2001:db8:19::1 \}/,
  ];

  // What only kube-proxy's layout writes: an inline map per chain, a plain DNAT for one endpoint.
  const KUBE_PROXY_SHAPES = [
    / numgen random mod 3 map \{ 0 : 198\.18\.10\.2 \. 8080, 1 : 198\.18\.11\.2 \. 8080, 2 : 198\.18\.12\.2 \. 8080 \}/, // not-ready left out
    /service-[A-Z2-7]{8}-shop\/single\/tcp\/ meta l4proto tcp dnat to 198\.18\.10\.2:8443$/m, // one endpoint, unnamed port
    /service-[A-Z2-7]{8}-kube-system\/dns\/udp\/dns meta l4proto udp dnat/, // UDP
    /service-[A-Z2-7]{8}-telco\/signal\/sctp\/sctp meta l4proto sctp dnat to 198\.18\.12\.2:3868/, // SCTP
  ];

  // What only the slots layout writes: bucket maps, one numgen rule per chain.
  const SLOTS_SHAPES = [
    /add map ip kube-proxy endpoints-0 \{ typeof numgen random mod 1 : ip daddr \. tcp dport; comment "endpoints of service chains, by slot"; \}/,
    /service-[A-Z2-7]{8}-shop\/web\/tcp\/http meta l4proto tcp dnat ip addr \. port to numgen random mod 3( offset \d+)? map @endpoints-0$/m, // not-ready left out
    /service-[A-Z2-7]{8}-kube-system\/dns\/udp\/dns meta l4proto udp dnat ip addr \. port to numgen random mod 2 offset \d+ map @endpoints-0$/m, // UDP
    /service-[A-Z2-7]{8}-telco\/signal\/sctp\/sctp meta l4proto sctp dnat ip addr \. port to numgen random mod 1 offset \d+ map @endpoints-0$/m, // SCTP
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
    ns.exec('nft', ['-f', golden]);
    const listed = ns.nftList();
    expect(listed).toContain('table ip kube-proxy {');
    expect(listed).toContain('table ip6 kube-proxy {');
    expect(listed).toMatch(/chain nat-prerouting \{\n\t\ttype nat hook prerouting priority dstnat; policy accept;/);
    expect(listed).toMatch(/chain filter-prerouting-pre-dnat \{\n\t\ttype filter hook prerouting priority dstnat - 10; policy accept;/);
  });
});
