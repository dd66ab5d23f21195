// The DNAT rule of a service or local chain without ClientIP affinity, in kube-proxy's shapes as of
// Kubernetes 1.37: one endpoint is DNATed to directly, two or more through an inline numgen map.
// docs/kube-proxy-contract.md has the upstream changes this follows.

import { meta, numgen, type RuleBuilder } from '../../../nft/index.js';
import type { ServiceEndpoint } from '../../model/types.js';

/**
 * The chain's one rule: `meta l4proto tcp dnat to 198.18.10.2:8080` for a single endpoint (no
 * numgen, no anonymous map: every map in a table costs the kernel on each later rule it adds, so
 * kube-proxy 1.37 stopped making one for a choice that is no choice), else
 * `meta l4proto tcp dnat ip addr . port to numgen random mod N map { 0 : addr . port, ... }`.
 *
 * The single-endpoint form is the plain address:port one (`dnat to [2001:db8::2]:8080` for IPv6),
 * not the `addr . port` concatenation kube-proxy first wrote: nft could not linearize that one for
 * IPv6, and kube-proxy replaced it before 1.37 shipped. On a node both list as `dnat to addr:port`.
 */
export function endpointDnat(r: () => RuleBuilder, l4: 'tcp' | 'udp' | 'sctp', family: 'ip' | 'ip6', eps: readonly ServiceEndpoint[]): RuleBuilder {
  const only = eps.length === 1 ? eps[0] : undefined;
  if (only) return r().match(meta.l4proto, l4).dnat({ family, addr: only.ip, port: only.port });
  return r()
    .match(meta.l4proto, l4)
    .dnatMap({ family, key: numgen('random', eps.length), map: { elements: eps.map((ep, i) => ({ key: [i], value: [ep.ip, ep.port] })) } });
}
