// The proxy's settings, from flags (and, later, a KubeProxyConfiguration file), turned into one
// layout configuration per IP family.

import { networkInterfaces } from 'node:os';
import { parsePrefix } from '../nft/types/address.js';
import { parseFamilyIP } from './model/service.js';
import type { LayoutName } from './layout/index.js';
import type { LayoutConfig, LocalInterface } from './layout/types.js';
import type { IPFamily } from './model/types.js';

export interface ProxySettings {
  table: string;
  /** How service ports are laid out in the table (`--layout`): slots (default) or kube-proxy. */
  layout: LayoutName;
  nodeName: string;
  /**
   * This node's IPs, the primary first (src/k8s/node-ips.ts: --node-ip, or one per family as
   * kube-proxy detects them). `primary` in nodePortAddresses means these.
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
  /**
   * The KubeProxyNFTablesLocalhostNodePorts feature gate (on by default): NodePorts on a loopback
   * entry of nodePortAddresses (127.0.0.1/32, ::1/128 or `localhost`) are served in userspace.
   */
  localhostNodePorts: boolean;
}

const LOOPBACK: Record<string, IPFamily[]> = { '127.0.0.1/32': ['ipv4'], '::1/128': ['ipv6'], localhost: ['ipv4', 'ipv6'] };

/** The families whose loopback address is listed in nodePortAddresses. */
export function localhostFamilies(s: Pick<ProxySettings, 'nodePortAddresses' | 'localhostNodePorts'>): IPFamily[] {
  if (!s.localhostNodePorts) return [];
  return [...new Set(s.nodePortAddresses.flatMap((e) => LOOPBACK[e] ?? []))];
}

export class SettingsError extends Error {}

/** Go-style durations: "1s", "500ms", "1m30s", "1h". */
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

export function parseDuration(text: string, flag: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    consumed += m[0].length;
  }
  if (!text || consumed !== text.length) throw new SettingsError(`${flag}: "${text}" is not a duration (like 1s, 500ms, 1m)`);
  return total;
}

function familyOfCidr(cidr: string, flag: string): IPFamily {
  const v6 = cidr.includes(':');
  if (!parsePrefix(cidr, v6 ? 6 : 4) || !cidr.includes('/')) throw new SettingsError(`${flag}: "${cidr}" is not a CIDR`);
  return v6 ? 'ipv6' : 'ipv4';
}

/** 127.0.0.0/8 and ::1: the kernel path takes no NodePorts there (the localhost proxy may). */
function isLoopbackIP(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.');
}

function cidrContains(cidr: string, ip: string): boolean {
  const v6 = cidr.includes(':');
  if (v6 !== ip.includes(':')) return false;
  const p = parsePrefix(cidr, v6 ? 6 : 4)!;
  const a = parsePrefix(`${ip}/${p.length}`, v6 ? 6 : 4);
  return a !== null && a.bytes.every((b, i) => b === p.bytes[i]);
}

/** The addresses of the interfaces of this process's namespace (loopback and link-local left out). */
export function localAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal && !a.address.startsWith('fe80:')) out.push(a.address);
  }
  return out;
}

export function layoutConfigs(s: Omit<ProxySettings, 'layout'>, families: IPFamily[] = ['ipv4', 'ipv6']): LayoutConfig[] {
  for (const ip of s.nodeIPs) if (!parseFamilyIP(ip)) throw new SettingsError(`--node-ip: "${ip}" is not an IP address`);
  if (s.masqueradeBit < 0 || s.masqueradeBit > 31 || !Number.isInteger(s.masqueradeBit)) throw new SettingsError(`masqueradeBit: ${s.masqueradeBit} is not in 0..31`);
  const byFamily = (list: string[], flag: string, f: IPFamily): string[] => list.filter((c) => familyOfCidr(c, flag) === f);
  return families.map((family) => {
    const nodeIPs = s.nodeIPs.filter((ip) => (ip.includes(':') ? 'ipv6' : 'ipv4') === family);
    const spec = s.nodePortAddresses.length ? s.nodePortAddresses : ['primary'];
    let nodePortAddresses: string[] | 'all' = [];
    const candidates = s.interfaceAddresses ?? s.nodeIPs;
    for (const entry of spec) {
      if (entry in LOOPBACK) continue; // served by the localhost proxy, not by the ruleset
      if (entry === 'primary') {
        // A loopback node IP (kube-proxy's guess when nothing else is known) takes no NodePorts here.
        nodePortAddresses.push(...nodeIPs.filter((ip) => !isLoopbackIP(ip)));
        continue;
      }
      if (familyOfCidr(entry, '--nodeport-addresses') !== family) continue;
      if (/^(0\.0\.0\.0|::)\/0$/.test(entry)) {
        nodePortAddresses = 'all';
        break;
      }
      nodePortAddresses.push(...candidates.filter((ip) => cidrContains(entry, ip)));
    }
    if (nodePortAddresses !== 'all') nodePortAddresses = [...new Set(nodePortAddresses)];
    return {
      family,
      table: s.table,
      clusterCIDRs: byFamily(s.clusterCIDRs, '--cluster-cidr', family),
      ...(s.localInterface ? { localInterface: s.localInterface } : {}),
      masqueradeAll: s.masqueradeAll,
      masqueradeMark: (1 << s.masqueradeBit) >>> 0,
      serviceCIDRs: byFamily(s.serviceCIDRs, '--service-cidr', family),
      nodePortAddresses,
      nodeIPs,
      localhostNodePorts: localhostFamilies(s).includes(family),
    };
  });
}
