// This node's IPs as kube-proxy finds them (cmd/kube-proxy/app/server.go: getNodeIPs and
// detectNodeIPs, with component-helpers' GetNodeHostIPs): one per family, the primary first. They
// decide which addresses accept NodePorts by default (nodePortAddresses "primary") and whether a
// firewall chain lets LB VIPs through as sources.
//
// kube-proxy reads them from its Node object: the first InternalIP, else the first ExternalIP, and
// the first address of the other family after it; a specific bindAddress replaces the primary; a
// family without an address gets its loopback address, with a warning. It reads them once, at
// start-up, and exits when the Node's IPs change (NodeManager); so does nftlink (src/cli/node-watch.ts).

import { parseFamilyIP } from '../proxy/model/service.js';
import type { IPFamily } from '../proxy/model/types.js';
import type { Node } from '../k8s/objects.js';

const LOOPBACK: Record<IPFamily, string> = { ipv4: '127.0.0.1', ipv6: '::1' };

const familyOf = (ip: string): IPFamily => (ip.includes(':') ? 'ipv6' : 'ipv4');

/** The Node's host IPs: its first InternalIP (else ExternalIP), then the first of the other family. */
export function nodeHostIPs(node: Node | undefined): string[] {
  const addresses = node?.status?.addresses ?? [];
  const ofType = (type: string): string[] =>
    addresses.filter((a) => a.type === type && typeof a.address === 'string' && parseFamilyIP(a.address) !== null).map((a) => a.address!);
  const all = [...ofType('InternalIP'), ...ofType('ExternalIP')];
  if (!all.length) return [];
  const other = all.find((ip) => familyOf(ip) !== familyOf(all[0]!));
  return other ? [all[0]!, other] : [all[0]!];
}

/** True for a bindAddress that names one address (not the unspecified 0.0.0.0 or ::, not empty). */
function specific(bindAddress: string): boolean {
  return parseFamilyIP(bindAddress)?.bytes.some((b) => b !== 0) ?? false;
}

export interface NodeIPs {
  /** One address per family, the primary family's first. */
  ips: string[];
  /** Where they came from, for the start-up log. */
  source: 'flag' | 'node' | 'bindAddress' | 'interfaces' | 'loopback';
  /** Families that got their loopback address because nothing else was known. */
  loopback: IPFamily[];
}

/**
 * The node IPs the proxy runs with. `flagIPs` (nftlink's --node-ip) win as given. Otherwise
 * kube-proxy's detection from `node` and `bindAddress`; `interfaceAddresses`, when given, are the
 * answer for a node nothing is known about (manifests without a Node: no API server to ask).
 */
export function chooseNodeIPs(opts: { flagIPs: readonly string[]; bindAddress: string; node: Node | undefined; interfaceAddresses?: readonly string[] | undefined }): NodeIPs {
  if (opts.flagIPs.length) return { ips: [...opts.flagIPs], source: 'flag', loopback: [] };
  const host = nodeHostIPs(opts.node);
  const bind = specific(opts.bindAddress);
  if (!host.length && !bind && opts.interfaceAddresses?.length) return { ips: [...opts.interfaceAddresses], source: 'interfaces', loopback: [] };
  const byFamily = new Map<IPFamily, string>();
  let primary: IPFamily = host.length ? familyOf(host[0]!) : 'ipv4';
  for (const ip of host) byFamily.set(familyOf(ip), ip);
  if (bind) {
    primary = familyOf(opts.bindAddress);
    byFamily.set(primary, opts.bindAddress);
  }
  const loopback: IPFamily[] = [];
  const ips = [primary, primary === 'ipv4' ? 'ipv6' : 'ipv4'].map((f) => {
    const family = f as IPFamily;
    const ip = byFamily.get(family);
    if (ip !== undefined) return ip;
    loopback.push(family);
    return LOOPBACK[family];
  });
  return { ips, source: bind ? 'bindAddress' : host.length ? 'node' : 'loopback', loopback };
}
