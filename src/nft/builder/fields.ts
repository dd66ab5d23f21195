// Fields a rule can match on, as the expression that loads them and the protocol match nft would
// add in front of them (its "payload dependency"): `tcp dport` needs `meta l4proto tcp`, `ip saddr`
// in an inet table needs `meta nfproto ipv4`.

import type { Expr } from '../expr/index.js';
import type { CtKey, MetaKey, PayloadBase } from '../netlink/constants.js';
import { ctField, metaField } from '../render/fields.js';
import {
  fib_addrtype,
  inet_proto,
  inet_service,
  integer,
  ipv4_addr,
  ipv6_addr,
  type Datatype,
  type Scalar,
} from '../types/datatypes.js';
import type { FibFlag } from '../expr/fib.js';

export type Dependency = { l4: 'tcp' | 'udp' | 'sctp' } | { l3: 'ip' | 'ip6' };

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
}

function payload(text: string, base: PayloadBase, offset: number, len: number, dtype: Datatype, dependency?: Dependency): Field {
  const f: Field = { text, dtype, len, load: (dreg) => ({ type: 'payload', base, offset, len, dreg }), payload: { base, offset } };
  return dependency ? { ...f, dependency } : f;
}

export const ip = {
  protocol: payload('ip protocol', 'network', 9, 1, inet_proto, { l3: 'ip' }),
  saddr: payload('ip saddr', 'network', 12, 4, ipv4_addr, { l3: 'ip' }),
  daddr: payload('ip daddr', 'network', 16, 4, ipv4_addr, { l3: 'ip' }),
};

export const ip6 = {
  nexthdr: payload('ip6 nexthdr', 'network', 6, 1, inet_proto, { l3: 'ip6' }),
  saddr: payload('ip6 saddr', 'network', 8, 16, ipv6_addr, { l3: 'ip6' }),
  daddr: payload('ip6 daddr', 'network', 24, 16, ipv6_addr, { l3: 'ip6' }),
};

function transport(proto: 'tcp' | 'udp' | 'sctp' | 'th') {
  const dep = proto === 'th' ? undefined : { l4: proto };
  return {
    sport: payload(`${proto} sport`, 'transport', 0, 2, inet_service, dep),
    dport: payload(`${proto} dport`, 'transport', 2, 2, inet_service, dep),
  };
}

export const tcp = transport('tcp');
export const udp = transport('udp');
export const sctp = transport('sctp');
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
  if (!Number.isInteger(modulus) || modulus < 1) throw new RangeError(`numgen modulus must be a positive integer, got ${modulus}`);
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
