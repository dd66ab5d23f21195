// The proxy's settings turned into one layout configuration per IP family: each family's node
// IPs, CIDRs and the addresses that accept NodePorts.

import { parsePrefix } from '../nft/index.js';
import { cidrContains } from '../proxy/model/cidr.js';
import { parseFamilyIP } from '../proxy/model/service.js';
import type { LayoutConfig } from '../proxy/layout/types.js';
import type { IPFamily } from '../proxy/model/types.js';
import { SettingsError, type ProxySettings } from './proxy-settings.js';

const LOOPBACK: Record<string, IPFamily[]> = { '127.0.0.1/32': ['ipv4'], '::1/128': ['ipv6'], localhost: ['ipv4', 'ipv6'] };

/** The families whose loopback address is listed in nodePortAddresses. */
export function localhostFamilies(s: Pick<ProxySettings, 'nodePortAddresses' | 'localhostNodePorts'>): IPFamily[] {
  if (!s.localhostNodePorts) return [];
  return [...new Set(s.nodePortAddresses.flatMap((e) => LOOPBACK[e] ?? []))];
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
