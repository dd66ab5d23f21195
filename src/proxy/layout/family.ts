// The per-family pieces every layout needs: which header fields, which address type, what the
// loopback range is.

import { ip, ip6, types, type Datatype } from '../../nft/index.js';
import type { IPFamily } from '../model/types.js';

const { ipv4_addr, ipv6_addr } = types;

export interface FamilyParts {
  l3: typeof ip | typeof ip6;
  addr: Datatype;
  /** What "not localhost" excludes (NodePorts on every address never answer on loopback). */
  loopback: string;
  natFamily: 'ip' | 'ip6';
}

export function familyParts(f: IPFamily): FamilyParts {
  return f === 'ipv4'
    ? { l3: ip, addr: ipv4_addr, loopback: '127.0.0.0/8', natFamily: 'ip' }
    : { l3: ip6, addr: ipv6_addr, loopback: '::1', natFamily: 'ip6' };
}
