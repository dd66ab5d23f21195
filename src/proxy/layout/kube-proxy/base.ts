// The fixed part of kube-proxy's nftables ruleset (Kubernetes 1.37): the table, its base chains
// and the jumps in them, the fixed chains, and the shared sets and maps every service port fills.

import { ct, fibType, meta, rule, th, types, type Chain, type NftSet, type Rule } from '../../../nft/index.js';
import { familyParts } from '../family.js';
import { BASE_CHAINS, CHAIN, COMMENT, localhostRejectComment, SET, TABLE_COMMENT } from '../names.js';
import { matchLocalTraffic } from '../local-traffic.js';
import { nftFamily, type BaseObjects, type LayoutConfig } from '../types.js';
import { oneOrSet } from './one-or-set.js';

const { inet_proto, inet_service } = types;

/** Jumps from the base chains, in rule order (kube-proxy's nftablesJumpChains, 1.34+). */
const JUMPS: { from: string; to: string; newOnly: boolean }[] = [
  { from: 'filter-prerouting-pre-dnat', to: CHAIN.firewallCheck, newOnly: true },
  { from: 'filter-forward', to: CHAIN.serviceEndpointsCheck, newOnly: true },
  { from: 'filter-forward', to: CHAIN.clusterIpsCheck, newOnly: true },
  { from: 'filter-input', to: CHAIN.nodeportEndpointsCheck, newOnly: true },
  { from: 'filter-input', to: CHAIN.serviceEndpointsCheck, newOnly: true },
  { from: 'filter-output', to: CHAIN.serviceEndpointsCheck, newOnly: true },
  { from: 'filter-output-pre-dnat', to: CHAIN.firewallCheck, newOnly: true },
  { from: 'filter-output', to: CHAIN.clusterIpsCheck, newOnly: true },
  { from: 'nat-output', to: CHAIN.services, newOnly: false },
  { from: 'nat-postrouting', to: CHAIN.masquerading, newOnly: false },
  { from: 'nat-prerouting', to: CHAIN.services, newOnly: false },
];

/** `meta mark set meta mark | MARK` as a builder step. */
export function markForMasquerade<B extends ReturnType<typeof rule>>(b: B, cfg: LayoutConfig): B {
  return b.setMark({ or: cfg.masqueradeMark });
}

export function baseObjects(cfg: LayoutConfig): BaseObjects {
  const family = nftFamily(cfg.family);
  const table = cfg.table;
  const { l3, addr, loopback } = familyParts(cfg.family);
  const r = () => rule(family);
  const serviceKey = [addr, inet_proto, inet_service];
  const portKey = [inet_proto, inet_service];

  const chains: Chain[] = BASE_CHAINS.map((b) => ({
    family,
    table,
    name: b.name,
    base: { type: b.type, hook: b.hook, priority: b.priority, policy: 'accept' as const },
  }));
  for (const name of Object.values(CHAIN)) {
    const c: Chain = { family, table, name };
    if (name === CHAIN.rejectChain) c.comment = COMMENT.rejectChain;
    chains.push(c);
  }

  const set = (name: string, key: NftSet['key'], comment: string, data?: NftSet['data']): NftSet => {
    const s: NftSet = { family, table, name, key, comment };
    if (data) s.data = data;
    return s;
  };
  const sets: NftSet[] = [
    set(SET.clusterIps, [addr], COMMENT.clusterIps),
    set(SET.hairpinConnections, [addr, addr, inet_proto, inet_service], COMMENT.hairpinConnections),
    set(SET.firewallIps, serviceKey, COMMENT.firewallIps, 'verdict'),
    set(SET.noEndpointNodeports, portKey, COMMENT.noEndpointNodeports, 'verdict'),
    set(SET.noEndpointServices, serviceKey, COMMENT.noEndpointServices, 'verdict'),
    set(SET.serviceIps, serviceKey, COMMENT.serviceIps, 'verdict'),
    set(SET.serviceNodeports, portKey, COMMENT.serviceNodeports, 'verdict'),
  ];
  if (cfg.localhostNodePorts) sets.push(set(SET.localhostNodeports, portKey, COMMENT.localhostNodeports));
  const specificNodePorts = cfg.nodePortAddresses !== 'all';
  if (specificNodePorts) sets.push(set(SET.nodeportIps, [addr], COMMENT.nodeportIps));

  const rules: Rule[] = [];
  const add = (chain: string, b: ReturnType<typeof r>, comment?: string): void => {
    rules.push(b.rule(table, chain, comment));
  };
  for (const j of JUMPS) add(j.from, j.newOnly ? r().match(ct.state, 'new').jump(j.to) : r().jump(j.to));

  if (cfg.localhostNodePorts) {
    // The userspace proxy serves TCP only: UDP and SCTP to a localhost NodePort are refused, and counted.
    for (const protocol of ['udp', 'sctp'] as const) {
      add('filter-input', r().match(meta.l4proto, protocol).match(l3.daddr, loopback).inSet([meta.l4proto, th.dport], SET.localhostNodeports).counter().reject(), localhostRejectComment(protocol));
    }
  }
  add(CHAIN.clusterIpsCheck, r().inSet(l3.daddr, SET.clusterIps).reject(), COMMENT.rejectClusterIPs);
  if (cfg.serviceCIDRs.length) add(CHAIN.clusterIpsCheck, r().match(l3.daddr, oneOrSet(cfg.serviceCIDRs)).drop(), COMMENT.dropUnallocated);
  add(CHAIN.firewallCheck, r().vmap([l3.daddr, meta.l4proto, th.dport], SET.firewallIps));
  // The mark says "masquerade this connection"; clear it so a reused skb (VXLAN) is not masqueraded twice.
  add(CHAIN.masquerading, r().matchMasked(meta.mark, cfg.masqueradeMark, 0, 'neq').setMark({ xor: cfg.masqueradeMark }).masquerade({ flags: ['fully-random'] }));
  // Hairpin: a pod reaching itself through a service must be masqueraded, or it answers itself directly.
  add(
    CHAIN.masquerading,
    r().match(ct.status, 'dnat').inSet([l3.saddr, l3.daddr, meta.l4proto, th.dport], SET.hairpinConnections).masquerade({ flags: ['fully-random'] }),
  );
  add(
    CHAIN.nodeportEndpointsCheck,
    specificNodePorts
      ? r().inSet(l3.daddr, SET.nodeportIps).vmap([meta.l4proto, th.dport], SET.noEndpointNodeports)
      : r().match(l3.daddr, loopback, 'neq').vmap([meta.l4proto, th.dport], SET.noEndpointNodeports),
  );
  add(CHAIN.rejectChain, r().reject());
  // Off-cluster sources reaching a ClusterIP are masqueraded, so replies come back through this node.
  if (cfg.masqueradeAll) {
    add(CHAIN.services, markForMasquerade(r().inSet(l3.daddr, SET.clusterIps), cfg), COMMENT.masqueradeClusterIP);
  } else {
    const offCluster = matchLocalTraffic(r().inSet(l3.daddr, SET.clusterIps), cfg, true);
    if (offCluster) add(CHAIN.services, markForMasquerade(offCluster, cfg), COMMENT.masqueradeClusterIP);
  }
  add(CHAIN.services, r().vmap([l3.daddr, meta.l4proto, th.dport], SET.serviceIps));
  add(
    CHAIN.services,
    specificNodePorts
      ? r().inSet(l3.daddr, SET.nodeportIps).vmap([meta.l4proto, th.dport], SET.serviceNodeports)
      : r().match(fibType('daddr'), 'local').match(l3.daddr, loopback, 'neq').vmap([meta.l4proto, th.dport], SET.serviceNodeports),
  );
  add(CHAIN.serviceEndpointsCheck, r().vmap([l3.daddr, meta.l4proto, th.dport], SET.noEndpointServices));

  const elements = new Map<string, { key: string[] }[]>();
  if (specificNodePorts) elements.set(SET.nodeportIps, (cfg.nodePortAddresses as readonly string[]).map((a) => ({ key: [a] })));
  return { table: { family, name: table, comment: TABLE_COMMENT }, chains, sets, rules, elements };
}
