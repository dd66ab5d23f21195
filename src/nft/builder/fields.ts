// Fields a rule can match on, as the expression that loads them and the protocol match nft would
// add in front of them (its "payload dependency"): `tcp dport` needs `meta l4proto tcp`, `ip saddr`
// in an inet table needs `meta nfproto ipv4`.

import type { Expr } from '../expr/index.js';
import type { CtKey, MetaKey, PayloadBase } from '../netlink/constants.js';
import { ctField, metaField } from '../render/fields.js';
import {
  dscp,
  fib_addrtype,
  icmp_code,
  icmp_type,
  icmpv6_code,
  icmpv6_type,
  inet_proto,
  inet_service,
  integer,
  ipv4_addr,
  ipv6_addr,
  tcp_flag,
  type Datatype,
  type Scalar,
} from '../types/datatypes.js';
import type { FibFlag } from '../expr/fib.js';
import { kindOf } from '../input-shape.js';
import { checkInteger } from './arguments.js';

/** Transport protocols a field implies; icmp and icmpv6 imply their network protocol as well. */
export type L4Protocol = 'tcp' | 'udp' | 'sctp' | 'icmp' | 'icmpv6';
export type Dependency = { l4: L4Protocol } | { l3: 'ip' | 'ip6' };

export interface Field {
  /** nft's spelling, for error messages. */
  readonly text: string;
  readonly dtype: Datatype;
  /** Bytes loaded into the register. */
  readonly len: number;
  load(dreg: number): Expr;
  readonly dependency?: Dependency;
  /** Header fields: where they sit, so a byte-aligned prefix loads only its bytes (as nft does). */
  readonly payload?: { base: PayloadBase; offset: number };
  /**
   * A field narrower than the bytes loaded (`ip dscp`: the top 6 bits of one byte): matched as
   * (bytes & mask) == value << shift, as nft compiles it.
   */
  readonly bits?: { mask: Uint8Array; shift: number };
}

function payload(text: string, base: PayloadBase, offset: number, len: number, dtype: Datatype, dependency?: Dependency): Field {
  const f: Field = { text, dtype, len, load: (dreg) => ({ type: 'payload', base, offset, len, dreg }), payload: { base, offset } };
  return dependency ? { ...f, dependency } : f;
}

function bitField(f: Field, mask: number[], shift: number): Field {
  return { ...f, bits: { mask: Uint8Array.from(mask), shift } };
}

export const ip = {
  protocol: payload('ip protocol', 'network', 9, 1, inet_proto, { l3: 'ip' }),
  saddr: payload('ip saddr', 'network', 12, 4, ipv4_addr, { l3: 'ip' }),
  daddr: payload('ip daddr', 'network', 16, 4, ipv4_addr, { l3: 'ip' }),
  ttl: payload('ip ttl', 'network', 8, 1, integer(1, 'big'), { l3: 'ip' }),
  /** The DSCP bits of the TOS byte: `ip dscp cs1`. */
  dscp: bitField(payload('ip dscp', 'network', 1, 1, dscp, { l3: 'ip' }), [0xfc], 2),
};

export const ip6 = {
  nexthdr: payload('ip6 nexthdr', 'network', 6, 1, inet_proto, { l3: 'ip6' }),
  saddr: payload('ip6 saddr', 'network', 8, 16, ipv6_addr, { l3: 'ip6' }),
  daddr: payload('ip6 daddr', 'network', 24, 16, ipv6_addr, { l3: 'ip6' }),
  hoplimit: payload('ip6 hoplimit', 'network', 7, 1, integer(1, 'big'), { l3: 'ip6' }),
  /** The DSCP bits of the traffic class, across the first two bytes: `ip6 dscp ef`. */
  dscp: bitField(payload('ip6 dscp', 'network', 0, 2, dscp, { l3: 'ip6' }), [0x0f, 0xc0], 6),
};

function transport(proto: 'tcp' | 'udp' | 'sctp' | 'th') {
  const dep = proto === 'th' ? undefined : { l4: proto };
  return {
    sport: payload(`${proto} sport`, 'transport', 0, 2, inet_service, dep),
    dport: payload(`${proto} dport`, 'transport', 2, 2, inet_service, dep),
  };
}

export const tcp = {
  ...transport('tcp'),
  /** `tcp flags syn` (any of), `matchMasked(tcp.flags, 'syn,ack', 'syn')` (`tcp flags & (syn | ack) == syn`). */
  flags: payload('tcp flags', 'transport', 13, 1, tcp_flag, { l4: 'tcp' }),
};
export const udp = transport('udp');
export const sctp = transport('sctp');
/** `icmp type echo-request`, `icmp code port-unreachable` (ipv4 only: nft adds `meta nfproto ipv4` in inet). */
export const icmp = {
  type: payload('icmp type', 'transport', 0, 1, icmp_type, { l4: 'icmp' }),
  code: payload('icmp code', 'transport', 1, 1, icmp_code, { l4: 'icmp' }),
};

/** `icmpv6 type nd-neighbor-solicit`: neighbour discovery needs these let through. */
export const icmpv6 = {
  type: payload('icmpv6 type', 'transport', 0, 1, icmpv6_type, { l4: 'icmpv6' }),
  code: payload('icmpv6 code', 'transport', 1, 1, icmpv6_code, { l4: 'icmpv6' }),
};

/** The transport header of any protocol: `th dport` (ports sit at the same offsets for tcp, udp, sctp). */
export const th = transport('th');

function metaOf(key: MetaKey): Field {
  const f = metaField(key);
  if (!f) throw new Error(`meta ${key} is not supported`);
  return { text: f.text, dtype: f.dtype, len: f.dtype.size, load: (dreg) => ({ type: 'meta', key, dreg }) };
}

export const meta = {
  l4proto: metaOf('l4proto'),
  nfproto: metaOf('nfproto'),
  mark: metaOf('mark'),
  iifname: metaOf('iifname'),
  oifname: metaOf('oifname'),
  iif: metaOf('iif'),
  oif: metaOf('oif'),
};

function ctOf(key: CtKey, dir?: 0 | 1): Field {
  const f = ctField(key, dir);
  if (!f) throw new Error(`ct ${key} is not supported`);
  return {
    text: f.text,
    dtype: f.dtype,
    len: f.dtype.size,
    load: (dreg) => (dir === undefined ? { type: 'ct', key, dreg } : { type: 'ct', key, dreg, dir }),
  };
}

export const ct = {
  state: ctOf('state'),
  status: ctOf('status'),
  mark: ctOf('mark'),
  originalProtoDst: ctOf('proto_dst', 0),
};

/** `fib daddr type`, `fib saddr . iif type`: a route lookup's address type (local, unicast, ...). */
export function fibType(...flags: FibFlag[]): Field {
  return {
    text: `fib ${flags.join(' . ')} type`,
    dtype: fib_addrtype,
    len: 4,
    load: (dreg) => ({ type: 'fib', flags, result: 'type', dreg }),
  };
}

/** What numgen writes: a 32-bit integer in host order (one object; callers make one numgen per rule). */
const NUMGEN_TYPE = integer(4, 'host');

/** `numgen random mod N [offset K]`: a 32-bit host-order number. */
export function numgen(mode: 'random' | 'inc', modulus: number, offset = 0): Field {
  if (mode !== 'random' && mode !== 'inc') throw new TypeError(`numgen(): the mode must be random or inc, not ${kindOf(mode)}`);
  checkInteger('numgen', 'the modulus', modulus, 1, 0xffffffff);
  checkInteger('numgen', 'the offset', offset, 0, 0xffffffff);
  return {
    text: `numgen ${mode} mod ${modulus}${offset ? ` offset ${offset}` : ''}`,
    dtype: NUMGEN_TYPE,
    len: 4,
    load: (dreg) => (offset ? { type: 'numgen', mode, modulus, offset, dreg } : { type: 'numgen', mode, modulus, dreg }),
  };
}

/**
 * A constant as a key field (an immediate into the register): what nft's grammar cannot write in a
 * set key, and netlink can. The slots layout keys its affinity pins `ip saddr . <service id>`.
 */
export function constant(dtype: Datatype, value: Scalar): Field {
  const data = dtype.parse(value);
  return { text: String(value), dtype, len: dtype.size, load: (dreg) => ({ type: 'immediate', dreg, data }) };
}
