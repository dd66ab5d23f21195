// Whether a CIDR holds an address: for nodePortAddresses (which of the node's addresses accept
// NodePorts) and loadBalancerSourceRanges (whether the node's own IP is an allowed source).

import { parsePrefix } from '../../nft/index.js';

/** True when `cidr` contains `ip`; false for addresses of the other family or text that does not parse. */
export function cidrContains(cidr: string, ip: string): boolean {
  const version = cidr.includes(':') ? 6 : 4;
  if ((version === 6) !== ip.includes(':')) return false;
  const prefix = parsePrefix(cidr, version);
  if (!prefix) return false;
  const masked = parsePrefix(`${ip}/${prefix.length}`, version);
  return masked !== null && masked.bytes.every((b, i) => b === prefix.bytes[i]);
}
