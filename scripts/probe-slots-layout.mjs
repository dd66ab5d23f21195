// Measurement probe for issue 5 (not product code; the real layout belongs in src/proxy/layout/slots/).
// Programs a slots-shaped ruleset in a fresh namespace: N services x E endpoints, one chain and one
// `dnat ip to numgen random mod E offset BASE map @endpoints-K` rule per service, PER services per
// bucket map (slot bases 64 apart), dispatched by one service-ips verdict map. Prints per-phase wall time.
// Usage (root, after `npm run build:ts`): node scripts/probe-slots-layout.mjs [N=10000] [E=5] [PER=64]
// Kernel fact it exposed (6.x nf_tables_api.c, nft_add_set_elem): every element added to a map loops
// over all of the map's bindings, so element cost grows with services per bucket: PER=256 -> 300 ms of
// elements at 10k x 5, PER=64 -> 170 ms.
import { execSync } from 'node:child_process';
import { Nftables, Transaction, rule, numgen, ip, meta, th, types } from '../dist/index.js';
const { ipv4_addr, inet_proto, inet_service, integer } = types;
const N = Number(process.argv[2] ?? 10000), E = Number(process.argv[3] ?? 5), PER = Number(process.argv[4] ?? 64);
const ns = 'nftlink-probe-' + process.pid;
execSync(`ip netns add ${ns}`);
const f = 'ip', table = 'kube-proxy';
const addr = (i) => `198.18.${(i >> 8) & 255}.${i & 255}`;
const ep = (i) => `198.19.${(i >> 8) & 255}.${i & 255}`;
try {
  const nft = Nftables.open({ netns: ns });
  const t0 = performance.now();
  const tx = new Transaction();
  tx.add({ table: { family: f, name: table } });
  tx.add({ chain: { family: f, table, name: 'services' } });
  tx.add({ chain: { family: f, table, name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100, policy: 'accept' } } });
  const svcIps = { family: f, table, name: 'service-ips', key: [ipv4_addr, inet_proto, inet_service], data: 'verdict', typeof: { key: [{ expr: 'payload', protocol: 'ip', field: 'daddr' }, { expr: 'meta', key: 'l4proto' }, { expr: 'payload', protocol: 'th', field: 'dport' }] } };
  tx.add({ set: svcIps });
  tx.add({ rule: rule(f).jump('services').rule(table, 'nat-prerouting') });
  tx.add({ rule: rule(f).vmap([ip.daddr, meta.l4proto, th.dport], 'service-ips').rule(table, 'services') });
  const buckets = Math.ceil(N / PER);
  for (let b = 0; b < buckets; b++) {
    tx.add({ set: { family: f, table, name: `endpoints-${b}`, key: [integer(4, 'host')], data: [ipv4_addr, inet_service], typeof: { key: [{ expr: 'numgen', mode: 'random', modulus: E }], data: [{ expr: 'payload', protocol: 'ip', field: 'daddr' }, { expr: 'payload', protocol: 'tcp', field: 'dport' }] } } });
  }
  const tBuild0 = performance.now();
  const ops = [];
  for (let s = 0; s < N; s++) {
    const b = Math.floor(s / PER), base = (s % PER) * 64;
    const chain = `svc-${s}`;
    ops.push({ chain: { family: f, table, name: chain } });
    ops.push({ rule: rule(f).match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', E, base), map: { name: `endpoints-${b}` } }).rule(table, chain) });
  }
  const els = new Map();
  for (let s = 0; s < N; s++) {
    const b = Math.floor(s / PER), base = (s % PER) * 64;
    const l = els.get(b) ?? []; els.set(b, l);
    for (let e = 0; e < E; e++) l.push({ key: [base + e], value: [ep(s * E + e), 8080] });
  }
  await nft.commit(tx);
  const tA = performance.now();
  // Chains and rules in bounded transactions, then the elements, so dispatch lands last.
  const BATCH = Number(process.env.BATCH ?? 20000);
  for (let i = 0; i < ops.length; i += BATCH) {
    const t = new Transaction({ known: { chains: [{ family: f, table, name: 'services' }], sets: [] } });
    for (const o of ops.slice(i, i + BATCH)) t.add(o);
    await nft.commit(t);
  }
  const tB = performance.now();
  const t2 = new Transaction();
  for (let b = 0; b < buckets; b++) t2.add({ set: { family: f, table, name: `endpoints-${b}`, key: [integer(4, 'host')], data: [ipv4_addr, inet_service] }, elements: els.get(b) });
  const vm = [];
  for (let s = 0; s < N; s++) vm.push({ key: [addr(s), 'tcp', 80], value: { kind: 'goto', chain: `svc-${s}` } });
  t2.add({ set: svcIps, elements: vm });
  await nft.commit(t2);
  const tC = performance.now();
  console.log(JSON.stringify({ N, E, PER, buckets, setupMs: +(tA - t0).toFixed(1), chainsRulesMs: +(tB - tA).toFixed(1), elementsMs: +(tC - tB).toFixed(1), totalMs: +(tC - t0).toFixed(1), rssMB: Math.round(process.memoryUsage().rss / 1e6) }));
  nft.close();
  if (process.env.SHOW) console.log(execSync(`ip netns exec ${ns} nft list ruleset`).toString().split('\n').slice(0, 30).join('\n'));
} finally {
  execSync(`ip netns del ${ns}`);
}
