// From a KubeProxyConfiguration to the ProxySettings the proxy engine runs with.
//
// detectLocalMode decides which source addresses are "local" (pod traffic, not masqueraded on its
// way to a ClusterIP): ClusterCIDR uses clusterCIDR; NodeCIDR uses this Node's spec.podCIDRs, as
// kube-proxy's NodeCIDR detector does (pkg/proxy/util/localdetector.go), so kube-proxy waits for
// the Node object to have podCIDRs before it programs anything, and restarts if they change
// (NodePodCIDRHandler). localTrafficCIDRs() returns undefined while they are not known.

import { hostname } from 'node:os';
import type { Node } from './objects.js';
import type { KubeProxyConfig } from './kube-proxy-config.js';
import type { ProxySettings } from '../proxy/config.js';

/** The feature gate of nftlink's userspace localhost NodePorts. */
export const LOCALHOST_NODEPORTS_GATE = 'KubeProxyNFTablesLocalhostNodePorts';

/** The CIDRs whose sources are local traffic; undefined: NodeCIDR mode and the Node has none yet. */
export function localTrafficCIDRs(cfg: KubeProxyConfig, node: Node | undefined): string[] | undefined {
  if (cfg.detectLocalMode === 'ClusterCIDR') return cfg.clusterCIDRs;
  if (cfg.detectLocalMode === 'BridgeInterface' || cfg.detectLocalMode === 'InterfaceNamePrefix') return [];
  const cidrs = node?.spec?.podCIDRs?.length ? node.spec.podCIDRs : node?.spec?.podCIDR ? [node.spec.podCIDR] : [];
  return cidrs.length ? cidrs : undefined;
}

/** What the interface modes of detectLocalMode make pod traffic (nothing for the CIDR modes). */
function localInterfaceOf(cfg: KubeProxyConfig): Pick<ProxySettings, 'localInterface'> {
  if (cfg.detectLocalMode === 'BridgeInterface') return { localInterface: { name: cfg.detectLocal.bridgeInterface, prefix: false } };
  if (cfg.detectLocalMode === 'InterfaceNamePrefix') return { localInterface: { name: cfg.detectLocal.interfaceNamePrefix, prefix: true } };
  return {};
}

/** The node name kube-proxy uses: hostnameOverride, else the hostname, trimmed and lower-cased. */
export function nodeNameFrom(cfg: KubeProxyConfig, systemHostname: string = hostname()): string {
  return (cfg.hostnameOverride || systemHostname).trim().toLowerCase();
}

/**
 * `base` (the settings only flags give: table, node IPs, service CIDRs) with the configuration's
 * values. `localCIDRs` is localTrafficCIDRs()'s answer; undefined keeps base.clusterCIDRs.
 */
export function settingsFromConfig(cfg: KubeProxyConfig, base: ProxySettings, localCIDRs: string[] | undefined = localTrafficCIDRs(cfg, undefined)): ProxySettings {
  return {
    ...base,
    nodeName: nodeNameFrom(cfg),
    clusterCIDRs: localCIDRs ?? base.clusterCIDRs,
    ...localInterfaceOf(cfg),
    nodePortAddresses: cfg.nodePortAddresses,
    masqueradeAll: cfg.nftables.masqueradeAll,
    masqueradeBit: cfg.nftables.masqueradeBit,
    minSyncPeriodMs: cfg.nftables.minSyncPeriodMs,
    syncPeriodMs: cfg.nftables.syncPeriodMs,
    // nftlink's feature gate (proxy-flags.ts --feature-gates), on unless the file turns it off.
    localhostNodePorts: cfg.featureGates[LOCALHOST_NODEPORTS_GATE] ?? base.localhostNodePorts,
  };
}
