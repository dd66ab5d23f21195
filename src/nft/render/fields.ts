// Names for what an expression loads into a register: header fields by (base, offset, length),
// meta and ct keys, with the data type that formats a value compared against them.

import type { CtKey, Family, MetaKey, PayloadBase } from '../netlink/constants.js';
import {
  ct_state,
  ct_status,
  dscp,
  icmp_code,
  icmp_type,
  icmpv6_code,
  icmpv6_type,
  ifname,
  inet_proto,
  inet_service,
  integer,
  ipv4_addr,
  ipv6_addr,
  mark,
  nf_proto,
  tcp_flag,
  type Datatype,
} from '../types/datatypes.js';

export interface FieldName {
  text: string;
  dtype: Datatype;
}

type L3 = 'ip' | 'ip6';
type L4 = 'tcp' | 'udp' | 'sctp' | 'udplite' | 'icmp' | 'icmpv6';

/** The protocols whose header starts with the two ports (`th sport` is theirs). */
const PORT_PROTOCOLS: ReadonlySet<L4> = new Set<L4>(['tcp', 'udp', 'sctp', 'udplite']);

const IP_FIELDS: Record<string, FieldName> = {
  '9:1': { text: 'ip protocol', dtype: inet_proto },
  '12:4': { text: 'ip saddr', dtype: ipv4_addr },
  '16:4': { text: 'ip daddr', dtype: ipv4_addr },
  '8:1': { text: 'ip ttl', dtype: integer(1, 'big') },
  '2:2': { text: 'ip length', dtype: integer(2, 'big') },
  '4:2': { text: 'ip id', dtype: integer(2, 'big') },
};

const IP6_FIELDS: Record<string, FieldName> = {
  '6:1': { text: 'ip6 nexthdr', dtype: inet_proto },
  '7:1': { text: 'ip6 hoplimit', dtype: integer(1, 'big') },
  '8:16': { text: 'ip6 saddr', dtype: ipv6_addr },
  '24:16': { text: 'ip6 daddr', dtype: ipv6_addr },
  '4:2': { text: 'ip6 length', dtype: integer(2, 'big') },
};

const L4_COMMON: Record<string, [string, Datatype]> = {
  '0:2': ['sport', inet_service],
  '2:2': ['dport', inet_service],
};
const L4_SPECIFIC: Record<L4, Record<string, [string, Datatype]>> = {
  tcp: {
    '4:4': ['sequence', integer(4, 'big')],
    '8:4': ['ackseq', integer(4, 'big')],
    '13:1': ['flags', tcp_flag],
    '14:2': ['window', integer(2, 'big')],
  },
  udp: { '4:2': ['length', integer(2, 'big')] },
  udplite: {},
  sctp: { '4:4': ['vtag', integer(4, 'big')] },
  icmp: { '0:1': ['type', icmp_type], '1:1': ['code', icmp_code], '2:2': ['checksum', integer(2, 'big')] },
  icmpv6: { '0:1': ['type', icmpv6_type], '1:1': ['code', icmpv6_code], '2:2': ['checksum', integer(2, 'big')] },
};

export function payloadField(base: PayloadBase, offset: number, len: number, l3: L3 | undefined, l4: L4 | undefined): FieldName | undefined {
  const key = `${offset}:${len}`;
  if (base === 'network') {
    if (l3 === 'ip') return IP_FIELDS[key];
    if (l3 === 'ip6') return IP6_FIELDS[key];
    return undefined;
  }
  if (base === 'transport') {
    const common = l4 === undefined || PORT_PROTOCOLS.has(l4) ? L4_COMMON[key] : undefined;
    const proto = l4 ?? 'th';
    if (common) return { text: `${proto} ${common[0]}`, dtype: common[1] };
    const specific = l4 ? L4_SPECIFIC[l4][key] : undefined;
    if (specific) return { text: `${proto} ${specific[0]}`, dtype: specific[1] };
  }
  return undefined;
}

/**
 * nft matches a byte-aligned prefix by loading only its bytes: `ip saddr 198.18.0.0/24` is a 3-byte
 * load at the address's offset. This finds the address field such a short load belongs to.
 */
export function payloadPrefixField(base: PayloadBase, offset: number, len: number, l3: L3 | undefined): FieldName | undefined {
  if (base !== 'network' || !l3) return undefined;
  const table = l3 === 'ip' ? IP_FIELDS : IP6_FIELDS;
  for (const [key, f] of Object.entries(table)) {
    const [off, size] = key.split(':').map(Number) as [number, number];
    if (off === offset && len < size && (f.dtype === ipv4_addr || f.dtype === ipv6_addr)) return f;
  }
  return undefined;
}

/** A raw payload reference nft reads back: `@nh,128,32` (offsets in bits). */
export function rawPayload(base: PayloadBase, offset: number, len: number): FieldName {
  const b = base === 'll' ? 'll' : base === 'network' ? 'nh' : base === 'transport' ? 'th' : 'ih';
  return { text: `@${b},${offset * 8},${len * 8}`, dtype: integer(len, 'big') };
}

export const L4_BY_PROTO: Record<number, L4> = { 1: 'icmp', 6: 'tcp', 17: 'udp', 58: 'icmpv6', 132: 'sctp', 136: 'udplite' };

/** The network protocol a transport protocol implies (`icmp type` needs no `meta nfproto ipv4`). */
export const L3_OF_L4: Partial<Record<L4, L3>> = { icmp: 'ip', icmpv6: 'ip6' };

/**
 * Header fields narrower than a byte, loaded as whole bytes and masked: `ip dscp cs1` is
 * `@nh,8,8 & 0xfc == 0x20`. The key is the load (offset:len) and the mask, in hex.
 */
interface BitField {
  text: string;
  dtype: Datatype;
  /** How far the value sits from the loaded bytes' lowest bit. */
  shift: number;
}
const IP_BITFIELDS: Record<string, BitField> = { '1:1:fc': { text: 'ip dscp', dtype: dscp, shift: 2 } };
const IP6_BITFIELDS: Record<string, BitField> = { '0:2:0fc0': { text: 'ip6 dscp', dtype: dscp, shift: 6 } };

export function payloadBitField(base: PayloadBase, offset: number, len: number, mask: Uint8Array, l3: L3 | undefined): BitField | undefined {
  if (base !== 'network' || !l3) return undefined;
  const key = `${offset}:${len}:${Array.from(mask, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  return (l3 === 'ip' ? IP_BITFIELDS : IP6_BITFIELDS)[key];
}

const META_FIELDS: Partial<Record<MetaKey, FieldName>> = {
  l4proto: { text: 'meta l4proto', dtype: inet_proto },
  nfproto: { text: 'meta nfproto', dtype: nf_proto },
  mark: { text: 'meta mark', dtype: mark },
  iifname: { text: 'iifname', dtype: ifname },
  oifname: { text: 'oifname', dtype: ifname },
  iif: { text: 'iif', dtype: integer(4, 'host') },
  oif: { text: 'oif', dtype: integer(4, 'host') },
  protocol: { text: 'meta protocol', dtype: integer(2, 'big') },
  priority: { text: 'meta priority', dtype: integer(4, 'host') },
  skuid: { text: 'meta skuid', dtype: integer(4, 'host') },
  skgid: { text: 'meta skgid', dtype: integer(4, 'host') },
  len: { text: 'meta length', dtype: integer(4, 'host') },
  pkttype: { text: 'meta pkttype', dtype: integer(1, 'host') },
  cpu: { text: 'meta cpu', dtype: integer(4, 'host') },
  nftrace: { text: 'meta nftrace', dtype: integer(1, 'host') },
};

export function metaField(key: MetaKey): FieldName | undefined {
  return META_FIELDS[key];
}

const CT_FIELDS: Partial<Record<CtKey, FieldName>> = {
  state: { text: 'ct state', dtype: ct_state },
  status: { text: 'ct status', dtype: ct_status },
  mark: { text: 'ct mark', dtype: mark },
  direction: { text: 'ct direction', dtype: integer(1, 'host') },
  l3protocol: { text: 'ct l3proto', dtype: nf_proto },
  protocol: { text: 'ct protocol', dtype: inet_proto },
  zone: { text: 'ct zone', dtype: integer(2, 'host') },
  proto_src: { text: 'proto-src', dtype: inet_service },
  proto_dst: { text: 'proto-dst', dtype: inet_service },
};

export function ctField(key: CtKey, dir: 0 | 1 | undefined, l3?: L3): FieldName | undefined {
  // `ct original ip daddr`: the address of the family at hand (nft needs the family word).
  if ((key === 'src' || key === 'dst') && l3) {
    return { text: `ct ${dir === 1 ? 'reply' : 'original'} ${l3} ${key === 'src' ? 'saddr' : 'daddr'}`, dtype: l3 === 'ip6' ? ipv6_addr : ipv4_addr };
  }
  const f = CT_FIELDS[key];
  if (!f) return undefined;
  if (key === 'proto_src' || key === 'proto_dst') {
    return { text: `ct ${dir === 1 ? 'reply' : 'original'} ${f.text}`, dtype: f.dtype };
  }
  return f;
}

export function defaultL3(family: Family): L3 | undefined {
  return family === 'ip' ? 'ip' : family === 'ip6' ? 'ip6' : undefined;
}

export type { L3, L4 };
