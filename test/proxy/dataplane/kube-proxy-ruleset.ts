// The ruleset a kube-proxy from before the 1.36 masquerading rework writes for a set of services,
// as `nft -f` input: the shapes of upstream's unit-test goldens (test/fixtures/proxy/upstream/, the
// `mark-for-masquerade` chain, an endpoint chain per endpoint with its own hairpin mark, the
// ClusterIP off-cluster mark in each service chain), written for the test cluster's addresses so
// that a takeover test can load what a real kube-proxy of that version left on a node. IPv4 only,
// as one kube-proxy family is one table. Chains come first, then sets, rules and elements, so
// that nft finds every chain a rule names.

import { endpointChainBase, chainName, serviceChainBase } from '../../../src/proxy/layout/names.js';

export interface OldEndpoint {
  ip: string;
  port: number;
  /** On this node (for Local traffic policies). */
  local: boolean;
}

export interface OldServicePort {
  namespace: string;
  name: string;
  portName: string;
  clusterIP: string;
  port: number;
  nodePort?: number;
  externalIPs?: string[];
  externalTrafficPolicy?: 'Cluster' | 'Local';
  affinitySeconds?: number;
  endpoints: OldEndpoint[];
}

export interface OldNode {
  podCIDR: string;
  serviceCIDR: string;
  nodeIP: string;
}

/** kube-proxy's endpoint order: `ip:port` compared as text. */
const ordered = (eps: OldEndpoint[]): OldEndpoint[] => [...eps].sort((a, b) => (`${a.ip}:${a.port}` < `${b.ip}:${b.port}` ? -1 : 1));

export function oldKubeProxyRuleset(node: OldNode, ports: OldServicePort[]): string {
  const T = 'ip kube-proxy';
  const chains: string[] = [];
  const sets: string[] = [];
  const rules: string[] = [];
  const elements: string[] = [];
  const chain = (name: string, decl = ''): void => void chains.push(`add chain ${T} ${name}${decl ? ` ${decl}` : ''}`);
  const rule = (name: string, text: string): void => void rules.push(`add rule ${T} ${name} ${text}`);
  const element = (set: string, text: string): void => void elements.push(`add element ${T} ${set} { ${text} }`);

  // upstream's baseRules, with this node's CIDRs and node IP.
  for (const [name, decl] of [
    ['cluster-ips-check', ''],
    ['filter-prerouting-pre-dnat', '{ type filter hook prerouting priority -110 ; }'],
    ['filter-output-pre-dnat', '{ type filter hook output priority -110 ; }'],
    ['filter-forward', '{ type filter hook forward priority 0 ; }'],
    ['filter-input', '{ type filter hook input priority 0 ; }'],
    ['filter-output', '{ type filter hook output priority 0 ; }'],
    ['firewall-check', ''],
    ['mark-for-masquerade', ''],
    ['masquerading', ''],
    ['nat-output', '{ type nat hook output priority -100 ; }'],
    ['nat-postrouting', '{ type nat hook postrouting priority 100 ; }'],
    ['nat-prerouting', '{ type nat hook prerouting priority -100 ; }'],
    ['nodeport-endpoints-check', ''],
    ['reject-chain', '{ comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }'],
    ['services', ''],
    ['service-endpoints-check', ''],
  ] as const)
    chain(name, decl);
  sets.push(
    `add set ${T} cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }`,
    `add set ${T} nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`,
    `add map ${T} firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`,
    `add map ${T} no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`,
    `add map ${T} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`,
    `add map ${T} service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`,
    `add map ${T} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`,
  );
  rule('cluster-ips-check', 'ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"');
  rule('cluster-ips-check', `ip daddr { ${node.serviceCIDR} } drop comment "Drop traffic to unallocated ClusterIPs"`);
  rule('filter-prerouting-pre-dnat', 'ct state new jump firewall-check');
  rule('filter-forward', 'ct state new jump service-endpoints-check');
  rule('filter-forward', 'ct state new jump cluster-ips-check');
  rule('filter-input', 'ct state new jump nodeport-endpoints-check');
  rule('filter-input', 'ct state new jump service-endpoints-check');
  rule('filter-output', 'ct state new jump service-endpoints-check');
  rule('filter-output-pre-dnat', 'ct state new jump firewall-check');
  rule('filter-output', 'ct state new jump cluster-ips-check');
  rule('firewall-check', 'ip daddr . meta l4proto . th dport vmap @firewall-ips');
  rule('mark-for-masquerade', 'mark set mark or 0x4000');
  rule('masquerading', 'mark and 0x4000 == 0 return');
  rule('masquerading', 'mark set mark xor 0x4000');
  rule('masquerading', 'masquerade fully-random');
  rule('nat-output', 'jump services');
  rule('nat-postrouting', 'jump masquerading');
  rule('nat-prerouting', 'jump services');
  rule('nodeport-endpoints-check', 'ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports');
  rule('reject-chain', 'reject');
  rule('services', 'ip daddr . meta l4proto . th dport vmap @service-ips');
  rule('services', 'ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports');
  rule('service-endpoints-check', 'ip daddr . meta l4proto . th dport vmap @no-endpoint-services');
  element('nodeport-ips', node.nodeIP);

  for (const sp of ports) {
    const id = { namespace: sp.namespace, name: sp.name, protocol: 'TCP' as const, portName: sp.portName };
    const base = serviceChainBase(id);
    const svc = chainName.cluster(base);
    const ext = chainName.external(base);
    const comment = `comment "${sp.namespace}/${sp.name}:${sp.portName}"`;
    const local = sp.externalTrafficPolicy === 'Local';
    const external = sp.nodePort !== undefined || (sp.externalIPs ?? []).length > 0;
    const eps = ordered(sp.endpoints);
    element('cluster-ips', sp.clusterIP);
    if (eps.length === 0) {
      element('no-endpoint-services', `${sp.clusterIP} . tcp . ${sp.port} ${comment} : goto reject-chain`);
      for (const ip of sp.externalIPs ?? []) element('no-endpoint-services', `${ip} . tcp . ${sp.port} ${comment} : goto reject-chain`);
      if (sp.nodePort !== undefined) element('no-endpoint-nodeports', `tcp . ${sp.nodePort} ${comment} : goto reject-chain`);
      continue;
    }
    chain(svc);
    element('service-ips', `${sp.clusterIP} . tcp . ${sp.port} : goto ${svc}`);
    rule(svc, `ip daddr ${sp.clusterIP} ip saddr != ${node.podCIDR} jump mark-for-masquerade`);
    const epChains = eps.map((ep) => endpointChainBase(id, ep));
    if (sp.affinitySeconds !== undefined) {
      for (const b of epChains) {
        sets.push(`add set ${T} ${chainName.affinity(b)} { type ipv4_addr ; flags dynamic,timeout ; timeout ${sp.affinitySeconds}s ; }`);
        rule(svc, `ip saddr @${chainName.affinity(b)} goto ${chainName.endpoint(b)}`);
      }
    }
    rule(svc, `numgen random mod ${eps.length} vmap { ${epChains.map((b, i) => `${i} : goto ${chainName.endpoint(b)}`).join(' , ')} }`);
    eps.forEach((ep, i) => {
      const e = chainName.endpoint(epChains[i]!);
      chain(e);
      rule(e, `ip saddr ${ep.ip} jump mark-for-masquerade`);
      if (sp.affinitySeconds !== undefined) rule(e, `update @${chainName.affinity(epChains[i]!)} { ip saddr }`);
      rule(e, `meta l4proto tcp dnat to ${ep.ip}:${ep.port}`);
    });
    if (!external) continue;
    chain(ext);
    if (local) {
      rule(ext, `ip saddr ${node.podCIDR} goto ${svc} comment "short-circuit pod traffic"`);
      rule(ext, `fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"`);
      rule(ext, `fib saddr type local goto ${svc} comment "short-circuit local traffic"`);
      if (!eps.some((e) => e.local)) {
        // No local endpoint: external traffic is dropped (the local chain is not written).
        for (const ip of sp.externalIPs ?? []) element('no-endpoint-services', `${ip} . tcp . ${sp.port} ${comment} : drop`);
        if (sp.nodePort !== undefined) element('no-endpoint-nodeports', `tcp . ${sp.nodePort} ${comment} : drop`);
      }
    } else {
      rule(ext, 'jump mark-for-masquerade');
      rule(ext, `goto ${svc}`);
    }
    for (const ip of sp.externalIPs ?? []) element('service-ips', `${ip} . tcp . ${sp.port} : goto ${ext}`);
    if (sp.nodePort !== undefined) element('service-nodeports', `tcp . ${sp.nodePort} : goto ${ext}`);
  }
  return [`add table ${T} { comment "rules for kube-proxy" ; }`, ...chains, ...sets, ...rules, ...elements, ''].join('\n');
}
