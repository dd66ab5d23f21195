// The last step of the configuration pipeline (command-line.ts -> kube-proxy-flags.ts ->
// kube-proxy-config.ts -> here): from a KubeProxyConfiguration and the few settings only nftlink's
// own flags give, to the ProxySettings the proxy engine and the servers run with.
//
// detectLocalMode decides which source addresses are "local" (pod traffic, not masqueraded on its
// way to a ClusterIP): ClusterCIDR uses clusterCIDR; NodeCIDR uses this Node's spec.podCIDRs, as
// kube-proxy's NodeCIDR detector does (pkg/proxy/util/localdetector.go), so kube-proxy waits for
// the Node object to have podCIDRs before it programs anything, and restarts if they change
// (NodePodCIDRHandler). localTrafficCIDRs() returns undefined while they are not known.

import { hostname } from 'node:os';
import type { Node } from '../k8s/objects.js';
import type { LayoutName } from '../proxy/layout/index.js';
import type { LocalInterface } from '../proxy/layout/types.js';
import type { KubeProxyConfig } from './kube-proxy-config.js';

export interface ProxySettings {
  table: string;
  /** How service ports are laid out in the table (`--layout`): slots (default) or kube-proxy. */
  layout: LayoutName;
  nodeName: string;
  /**
   * This node's IPs, the primary first (node-ips.ts: --node-ip, or one per family as kube-proxy
   * detects them). `primary` in nodePortAddresses means these.
   */
  nodeIPs: string[];
  /**
   * The addresses of the proxy's namespace, which CIDRs in nodePortAddresses select from (as
   * kube-proxy matches them against the node's interfaces); undefined: nodeIPs (with --netns the
   * namespace's interfaces are not visible from here).
   */
  interfaceAddresses?: string[];
  clusterCIDRs: string[];
  /** detectLocalMode BridgeInterface / InterfaceNamePrefix: pod traffic is what comes in on it (clusterCIDRs unused). */
  localInterface?: LocalInterface;
  serviceCIDRs: string[];
  /** CIDRs, or the keyword `primary` (the node's IPs); empty means `primary`, as in nftables mode. */
  nodePortAddresses: string[];
  masqueradeAll: boolean;
  masqueradeBit: number;
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  /** At least this often a sync compares everything with a fresh dump (`--full-sync-period`; default 1 h). */
  fullSyncPeriodMs?: number;
  /**
   * The KubeProxyNFTablesLocalhostNodePorts feature gate (on by default): NodePorts on a loopback
   * entry of nodePortAddresses (127.0.0.1/32, ::1/128 or `localhost`) are served in userspace.
   */
  localhostNodePorts: boolean;
}

/** The settings only nftlink's own flags give (command-line.ts); the configuration gives the rest. */
export type FlagSettings = Pick<ProxySettings, 'table' | 'layout' | 'nodeIPs' | 'interfaceAddresses' | 'serviceCIDRs' | 'localhostNodePorts' | 'fullSyncPeriodMs'>;

/** A setting that cannot be used; the CLI answers it with the usage exit code. */
export class SettingsError extends Error {}

/** The feature gate of nftlink's userspace localhost NodePorts. */
export const LOCALHOST_NODEPORTS_GATE = 'KubeProxyNFTablesLocalhostNodePorts';

/** `--feature-gates A=true,B=false` as kube-proxy takes it. */
export function parseFeatureGates(text: string | undefined): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const part of (text ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9]+)=(true|false)$/.exec(part);
    if (!m) throw new SettingsError(`--feature-gates: "${part}" is not Name=true or Name=false`);
    out[m[1]!] = m[2] === 'true';
  }
  return out;
}

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
 * The settings to run with: `flags` (the settings only flags give) with the configuration's values.
 * `localCIDRs` is localTrafficCIDRs()'s answer; undefined (NodeCIDR before the Node is known) keeps
 * the configuration's clusterCIDRs.
 */
export function settingsFromConfig(cfg: KubeProxyConfig, flags: FlagSettings, localCIDRs: string[] | undefined = localTrafficCIDRs(cfg, undefined)): ProxySettings {
  return {
    ...flags,
    nodeName: nodeNameFrom(cfg),
    clusterCIDRs: localCIDRs ?? cfg.clusterCIDRs,
    ...localInterfaceOf(cfg),
    nodePortAddresses: cfg.nodePortAddresses,
    masqueradeAll: cfg.nftables.masqueradeAll,
    masqueradeBit: cfg.nftables.masqueradeBit,
    minSyncPeriodMs: cfg.nftables.minSyncPeriodMs,
    syncPeriodMs: cfg.nftables.syncPeriodMs,
    // nftlink's feature gate (command-line.ts --feature-gates), on unless the file turns it off.
    localhostNodePorts: cfg.featureGates[LOCALHOST_NODEPORTS_GATE] ?? flags.localhostNodePorts,
  };
}
