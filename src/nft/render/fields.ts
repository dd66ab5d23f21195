// Names for what an expression loads into a register: header fields by (base, offset, length),
// meta and ct keys, with the data type that formats a value compared against them.

import type { CtKey, Family, MetaKey, PayloadBase } from '../netlink/constants.js';
import {
  ct_state,
  ct_status,
  ifname,
  inet_proto,
  inet_service,
  integer,
  ipv4_addr,
  ipv6_addr,
  mark,
  nf_proto,
  type Datatype,
} from '../types/datatypes.js';

export interface FieldName {
  text: string;
  dtype: Datatype;
}

type L3 = 'ip' | 'ip6';
type L4 = 'tcp' | 'udp' | 'sctp' | 'udplite';

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
  tcp: { '4:4': ['sequence', integer(4, 'big')], '8:4': ['ackseq', integer(4, 'big')], '14:2': ['window', integer(2, 'big')] },
  udp: { '4:2': ['length', integer(2, 'big')] },
  udplite: {},
  sctp: { '4:4': ['vtag', integer(4, 'big')] },
};

export function payloadField(base: PayloadBase, offset: number, len: number, l3: L3 | undefined, l4: L4 | undefined): FieldName | undefined {
  const key = `${offset}:${len}`;
  if (base === 'network') {
    if (l3 === 'ip') return IP_FIELDS[key];
    if (l3 === 'ip6') return IP6_FIELDS[key];
    return undefined;
  }
  if (base === 'transport') {
    const common = L4_COMMON[key];
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

export const L4_BY_PROTO: Record<number, L4> = { 6: 'tcp', 17: 'udp', 132: 'sctp', 136: 'udplite' };

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
