// Which traffic is pod ("local") traffic, as kube-proxy's LocalTrafficDetector writes it in nft
// (pkg/proxy/util/localdetector.go): by source address (detectLocalMode ClusterCIDR, NodeCIDR), or
// by the interface the packet came in on (BridgeInterface: `iifname "cbr0"`; InterfaceNamePrefix:
// `iifname "veth*"`). Off-cluster traffic to a ClusterIP is masqueraded; pod traffic to a Local
// policy service may use any endpoint.

import { meta, type RuleBuilder } from '../../nft/index.js';
import { familyParts } from './family.js';
import type { LayoutConfig } from './types.js';

/**
 * Adds the match for pod traffic (or, with `not`, for everything else) to `rule`: kube-proxy's
 * IfLocalNFT / IfNotLocalNFT. Undefined when nothing is known to be pod traffic (no CIDRs given).
 */
export function matchLocalTraffic(rule: RuleBuilder, cfg: LayoutConfig, not = false): RuleBuilder | undefined {
  const op = not ? 'neq' : 'eq';
  if (cfg.localInterface) {
    const { name, prefix } = cfg.localInterface;
    return rule.match(meta.iifname, prefix ? `${name}*` : name, op);
  }
  if (!cfg.clusterCIDRs.length) return undefined;
  const { l3 } = familyParts(cfg.family);
  return rule.match(l3.saddr, cfg.clusterCIDRs.length === 1 ? cfg.clusterCIDRs[0]! : [...cfg.clusterCIDRs], op);
}
