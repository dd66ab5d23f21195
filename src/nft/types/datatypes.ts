// nft's data types: the ids it stores in a set's key/data type (concatenations fold them 6 bits at a
// time), their size and byte order in a register, and the text nft reads and prints for a value.

import { cString } from '../c-string.js';
import { formatIPv4, formatIPv6, parseIPv4Into, parseIPv6 } from './address.js';
import { CT_STATE_BITS, CT_STATUS_BITS, ICMP_CODE, ICMPV6_CODE, RTN } from '../netlink/constants.js';

/** A value as callers write it: addresses and names as strings, numbers as numbers. */
export type Scalar = string | number | bigint;

export type ByteOrder = 'big' | 'host';

export interface Datatype {
  /** nft's TYPE_* id. */
  readonly id: number;
  /** The name nft uses in `type ...` declarations. */
  readonly name: string;
  /** Size in bytes of one value in a register (and in a set key). */
  readonly size: number;
  readonly byteorder: ByteOrder;
  /** Value -> register bytes; throws a RangeError that says why. */
  parse(value: Scalar): Uint8Array;
  /** The same, written in place (`size` bytes at `at`): the encoder's allocation-free path. */
  write(value: Scalar, out: Uint8Array, at: number): void;
  /** Register bytes -> the text nft prints. */
  format(bytes: Uint8Array): string;
  /** Register bytes -> the value callers use (round-trips through parse). */
  toValue(bytes: Uint8Array): Scalar;
  /** toValue of the `size` bytes at `at`, without a view: the dump decoder's hot path. */
  read(buf: Uint8Array, at: number): Scalar;
}

/** Unsigned value of `size` (<= 6) bytes at `at`. */
function numberAt(buf: Uint8Array, at: number, size: number, order: ByteOrder): number {
  let n = 0;
  if (order === 'big') for (let i = 0; i < size; i++) n = n * 256 + buf[at + i]!;
  else for (let i = size - 1; i >= 0; i--) n = n * 256 + buf[at + i]!;
  return n;
}

/** read() for types that only have toValue on a view. */
function readVia(size: number, toValue: (b: Uint8Array) => Scalar): (buf: Uint8Array, at: number) => Scalar {
  return (buf, at) => toValue(buf.subarray(at, at + size));
}

const TYPE_BITS = 6;

function writeUint(value: Scalar, size: number, order: ByteOrder, what: string, out: Uint8Array, at: number): void {
  // Fast paths (the hot ones: ports, protocols, marks): a small integer in 1, 2 or 4 bytes.
  if (typeof value === 'number' && (value >>> 0) === value) {
    if (size === 1 && value < 0x100) {
      out[at] = value;
      return;
    }
    if (size === 2 && value < 0x10000) {
      out[at + (order === 'big' ? 0 : 1)] = value >>> 8;
      out[at + (order === 'big' ? 1 : 0)] = value & 0xff;
      return;
    }
    if (size === 4) {
      if (order === 'big') {
        out[at] = value >>> 24;
        out[at + 1] = (value >>> 16) & 0xff;
        out[at + 2] = (value >>> 8) & 0xff;
        out[at + 3] = value & 0xff;
      } else {
        out[at] = value & 0xff;
        out[at + 1] = (value >>> 8) & 0xff;
        out[at + 2] = (value >>> 16) & 0xff;
        out[at + 3] = value >>> 24;
      }
      return;
    }
  }
  out.set(uintBytes(value, size, order, what), at);
}

function uintBytes(value: Scalar, size: number, order: ByteOrder, what: string): Uint8Array {
  const max = (1n << BigInt(size * 8)) - 1n;
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new RangeError(`${what}: ${value} is not an integer`);
    n = BigInt(value);
  } else if (typeof value === 'string') {
    const t = value.trim();
    if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(t)) throw new RangeError(`${what}: "${value}" is not a number from 0 to ${max}`);
    n = BigInt(t);
  } else {
    throw new TypeError(`${what}: ${value === null ? 'null' : typeof value} is not a number from 0 to ${max}`);
  }
  if (n < 0n || n > max) throw new RangeError(`${what}: ${value} is out of range 0..${max}`);
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) {
    const byte = Number((n >> BigInt(8 * i)) & 0xffn);
    out[order === 'big' ? size - 1 - i : i] = byte;
  }
  return out;
}

/** Unsigned value of up to 6 bytes as a number (the common case, without BigInt). */
function bytesToNumber(b: Uint8Array, order: ByteOrder): number {
  let n = 0;
  if (order === 'big') for (let i = 0; i < b.length; i++) n = n * 256 + b[i]!;
  else for (let i = b.length - 1; i >= 0; i--) n = n * 256 + b[i]!;
  return n;
}

export function bytesToUint(b: Uint8Array, order: ByteOrder): bigint {
  if (b.length <= 6) return BigInt(bytesToNumber(b, order));
  let n = 0n;
  if (order === 'big') for (let i = 0; i < b.length; i++) n = (n << 8n) | BigInt(b[i]!);
  else for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

function num(b: Uint8Array, order: ByteOrder): number | bigint {
  if (b.length <= 6) return bytesToNumber(b, order);
  const n = bytesToUint(b, order);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** parse() in terms of write(), for types whose write is the primitive. */
function parseVia(size: number, write: (v: Scalar, out: Uint8Array, at: number) => void): (v: Scalar) => Uint8Array {
  return (v) => {
    const out = new Uint8Array(size);
    write(v, out, 0);
    return out;
  };
}

/**
 * The number a table of names (protocols, flags, hooks...) has for `name`, or undefined. Only a
 * number counts: an inherited name (`constructor`, `toString`) finds one of Object's functions,
 * and no table has a number that is not its own. No Object.hasOwn: a call into C++ for every
 * symbolic value written (`meta l4proto tcp` in every rule).
 */
export function ownCode(table: Readonly<Record<string, number>>, name: unknown): number | undefined {
  const code = typeof name === 'string' ? table[name] : undefined;
  return typeof code === 'number' ? code : undefined;
}

function integerType(id: number, name: string, size: number, order: ByteOrder, hex: boolean): Datatype {
  const write = (v: Scalar, out: Uint8Array, at: number): void => writeUint(v, size, order, name, out, at);
  return {
    id,
    name,
    size,
    byteorder: order,
    write,
    parse: parseVia(size, write),
    format: (b) => {
      const n = bytesToUint(b, order);
      return hex ? `0x${n.toString(16).padStart(size * 2, '0')}` : n.toString();
    },
    toValue: (b) => num(b, order),
    read: size <= 6 ? (buf, at) => numberAt(buf, at, size, order) : readVia(size, (b) => num(b, order)),
  };
}

function symbolicType(
  id: number,
  name: string,
  size: number,
  order: ByteOrder,
  symbols: Record<string, number>,
): Datatype {
  const byValue = new Map(Object.entries(symbols).map(([k, v]) => [v, k]));
  const write = (v: Scalar, out: Uint8Array, at: number): void => {
    const code = ownCode(symbols, v);
    if (code === undefined && typeof v === 'string' && !/^\s*(0x[0-9a-fA-F]+|\d+)\s*$/.test(v)) {
      throw new RangeError(`${name}: "${v}" is not one of: ${Object.keys(symbols).join(', ')} (or a number)`);
    }
    writeUint(code ?? v, size, order, name, out, at);
  };
  return {
    id,
    name,
    size,
    byteorder: order,
    write,
    parse: parseVia(size, write),
    format: (b) => {
      const n = bytesToNumber(b, order);
      return byValue.get(n) ?? n.toString();
    },
    toValue: (b) => {
      const n = bytesToNumber(b, order);
      return byValue.get(n) ?? n;
    },
    read: (buf, at) => {
      const n = numberAt(buf, at, size, order);
      return byValue.get(n) ?? n;
    },
  };
}

/** Bitmask types print as a comma list of flag names (`ct state established,related`). */
function bitmaskType(id: number, name: string, size: number, bits: Record<string, number>): Datatype {
  const entries = Object.entries(bits);
  const parseOne = (v: Scalar): number => {
    if (typeof v === 'string') {
      let acc = 0;
      for (const part of v.split(/[,|]/).map((s) => s.trim())) {
        const bit = ownCode(bits, part);
        if (bit === undefined) {
          if (/^(0x[0-9a-f]+|\d+)$/i.test(part)) acc |= Number(part);
          else throw new RangeError(`${name}: unknown flag "${part}" (known: ${entries.map((e) => e[0]).join(', ')})`);
        } else acc |= bit;
      }
      return acc;
    }
    return Number(v);
  };
  const write = (v: Scalar, out: Uint8Array, at: number): void => writeUint(parseOne(v), size, 'host', name, out, at);
  return {
    id,
    name,
    size,
    byteorder: 'host',
    write,
    parse: parseVia(size, write),
    format: (b) => {
      let n = bytesToNumber(b, 'host');
      const names: string[] = [];
      for (const [k, bit] of entries) {
        if (n & bit) {
          names.push(k);
          n &= ~bit;
        }
      }
      if (n !== 0) names.push(`0x${n.toString(16)}`);
      return names.length ? names.join(',') : '0x0';
    },
    toValue: (b) => {
      const n = bytesToNumber(b, 'host');
      const names = entries.filter(([, bit]) => n & bit).map(([k]) => k);
      return names.join(',');
    },
    read: readVia(size, (b) => entries.filter(([, bit]) => bytesToNumber(b, 'host') & bit).map(([k]) => k).join(',')),
  };
}

// "0." .. "255." and "0" .. "255": a dumped address is three concatenations of ready strings, half
// the time of a template literal (a 100k-element map dump reads 200k addresses).
const OCTET_DOT = Array.from({ length: 256 }, (_, i) => `${i}.`);
const OCTET = Array.from({ length: 256 }, (_, i) => String(i));
/**
 * "a.b.c." for the /24s met lately, so that a dumped address is one concatenation instead of three
 * (the two intermediate strings were 400k short-lived allocations in a 100k-element map's dump,
 * which the young generation scavenges while the kernel fills the next part: the dump process's
 * user time 0.415 -> 0.345 s, medians of 12 alternated). Bounded: a dump of many /24s starts it
 * over rather than keep them all.
 */
const PREFIX24_MAX = 4096;
const prefix24 = new Map<number, string>();
const readIPv4 = (buf: Uint8Array, at: number): string => {
  const k = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!;
  let p = prefix24.get(k);
  if (p === undefined) {
    if (prefix24.size >= PREFIX24_MAX) prefix24.clear();
    p = OCTET_DOT[buf[at]!]! + OCTET_DOT[buf[at + 1]!]! + OCTET_DOT[buf[at + 2]!]!;
    prefix24.set(k, p);
  }
  return p + OCTET[buf[at + 3]!]!;
};

// nft's TYPE_* ids of the types writeValues (values.ts) writes without calling write(): the fields
// of kube-proxy's maps, `ipv4_addr . inet_proto . inet_service`.
/** nft's `integer` type: every size and byte order (integer()). */
export const TYPE_INTEGER = 4;
export const TYPE_IPV4_ADDR = 7;
export const TYPE_INET_PROTO = 12;
export const TYPE_INET_SERVICE = 13;

const writeIPv4 = (v: Scalar, out: Uint8Array, at: number): void => {
  if (typeof v !== 'string' || !parseIPv4Into(v, out, at)) throw new RangeError(`ipv4_addr: "${String(v)}" is not an IPv4 address`);
};
export const ipv4_addr: Datatype = {
  id: TYPE_IPV4_ADDR,
  name: 'ipv4_addr',
  size: 4,
  byteorder: 'big',
  write: writeIPv4,
  parse: parseVia(4, writeIPv4),
  format: formatIPv4,
  toValue: formatIPv4,
  read: readIPv4,
};

const parseV6 = (v: Scalar): Uint8Array => {
  const b = typeof v === 'string' ? parseIPv6(v) : null;
  if (!b) throw new RangeError(`ipv6_addr: "${String(v)}" is not an IPv6 address`);
  return b;
};
export const ipv6_addr: Datatype = {
  id: 8,
  name: 'ipv6_addr',
  size: 16,
  byteorder: 'big',
  parse: parseV6,
  write: (v, out, at) => out.set(parseV6(v), at),
  format: formatIPv6,
  toValue: formatIPv6,
  read: readVia(16, formatIPv6),
};

export const INET_PROTOCOLS: Record<string, number> = {
  icmp: 1,
  igmp: 2,
  tcp: 6,
  udp: 17,
  ipv6: 41,
  gre: 47,
  esp: 50,
  ah: 51,
  'ipv6-icmp': 58,
  sctp: 132,
  udplite: 136,
};

export const inet_proto = symbolicType(TYPE_INET_PROTO, 'inet_proto', 1, 'big', INET_PROTOCOLS);
export const inet_service = integerType(TYPE_INET_SERVICE, 'inet_service', 2, 'big', false);
export const mark = integerType(19, 'mark', 4, 'host', true);
export const nf_proto = symbolicType(2, 'nf_proto', 1, 'host', { ipv4: 2, ipv6: 10 });
export const ct_state = bitmaskType(26, 'ct_state', 4, CT_STATE_BITS);
export const ct_status = bitmaskType(28, 'ct_status', 4, CT_STATUS_BITS);
export const fib_addrtype = symbolicType(38, 'fib_addrtype', 4, 'host', RTN);
// The types of the fields a host firewall matches beyond addresses and ports (nft's TYPE_* ids and
// symbol tables, src/proto.c and src/datatype.c of nftables 1.0.6).
export const ICMP_TYPES: Record<string, number> = {
  'echo-reply': 0,
  'destination-unreachable': 3,
  'source-quench': 4,
  redirect: 5,
  'echo-request': 8,
  'router-advertisement': 9,
  'router-solicitation': 10,
  'time-exceeded': 11,
  'parameter-problem': 12,
  'timestamp-request': 13,
  'timestamp-reply': 14,
  'info-request': 15,
  'info-reply': 16,
  'address-mask-request': 17,
  'address-mask-reply': 18,
};
export const ICMPV6_TYPES: Record<string, number> = {
  'destination-unreachable': 1,
  'packet-too-big': 2,
  'time-exceeded': 3,
  'parameter-problem': 4,
  'echo-request': 128,
  'echo-reply': 129,
  'mld-listener-query': 130,
  'mld-listener-report': 131,
  'mld-listener-done': 132,
  'nd-router-solicit': 133,
  'nd-router-advert': 134,
  'nd-neighbor-solicit': 135,
  'nd-neighbor-advert': 136,
  'nd-redirect': 137,
  'router-renumbering': 138,
  'ind-neighbor-solicit': 141,
  'ind-neighbor-advert': 142,
  'mld2-listener-report': 143,
};
export const TCP_FLAGS = { fin: 0x01, syn: 0x02, rst: 0x04, psh: 0x08, ack: 0x10, urg: 0x20, ecn: 0x40, cwr: 0x80 } as const;
/** DSCP code points (the 6-bit value, not shifted into the header's byte). */
export const DSCP_VALUES: Record<string, number> = {
  cs0: 0, cs1: 8, cs2: 16, cs3: 24, cs4: 32, cs5: 40, cs6: 48, cs7: 56,
  af11: 10, af12: 12, af13: 14, af21: 18, af22: 20, af23: 22,
  af31: 26, af32: 28, af33: 30, af41: 34, af42: 36, af43: 38, ef: 46,
};
export const icmp_type = symbolicType(14, 'icmp_type', 1, 'big', ICMP_TYPES);
export const icmpv6_type = symbolicType(29, 'icmpv6_type', 1, 'big', ICMPV6_TYPES);
export const icmp_code = symbolicType(32, 'icmp_code', 1, 'big', ICMP_CODE);
export const icmpv6_code = symbolicType(33, 'icmpv6_code', 1, 'big', ICMPV6_CODE);
export const tcp_flag = bitmaskType(15, 'tcp_flag', 1, TCP_FLAGS);
export const dscp = symbolicType(36, 'dscp', 1, 'big', DSCP_VALUES);
/** `rt ipsec exists`: nft's boolean. */
export const boolean = symbolicType(39, 'boolean', 1, 'host', { missing: 0, exists: 1 });
const parseEther = (v: Scalar): Uint8Array => {
  const m = typeof v === 'string' ? /^([0-9a-f]{1,2})(:[0-9a-f]{1,2}){5}$/i.exec(v) : null;
  if (!m) throw new RangeError(`ether_addr: "${String(v)}" is not a MAC address`);
  return Uint8Array.from((v as string).split(':').map((h) => parseInt(h, 16)));
};
export const ether_addr: Datatype = {
  id: 9,
  name: 'ether_addr',
  size: 6,
  byteorder: 'big',
  parse: parseEther,
  write: (v, out, at) => out.set(parseEther(v), at),
  format: (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':'),
  toValue: (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':'),
  read: readVia(6, (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':')),
};

/** Interface names: a 16-byte NUL-padded string (IFNAMSIZ). */
const writeIfname = (v: Scalar, out: Uint8Array, at: number): void => {
  const s = String(v);
  const bytes = new TextEncoder().encode(s);
  if (bytes.length >= 16) throw new RangeError(`ifname: "${s}" is longer than 15 bytes`);
  out.fill(0, at, at + 16);
  out.set(bytes, at);
};
export const ifname: Datatype = {
  id: 41,
  name: 'ifname',
  size: 16,
  byteorder: 'host',
  write: writeIfname,
  parse: parseVia(16, writeIfname),
  format: (b) => JSON.stringify(cString(b)),
  toValue: (b) => cString(b),
  read: (buf, at) => cString(buf, at, at + 16),
};

/** A plain integer of a given width: numgen results, keys of `type integer` sets (host order). */
const integers = new Map<string, Datatype>();

/** nft's `integer` of `size` bytes: one shared, frozen object per size and byte order (rule builders ask for one per numgen). */
export function integer(size = 4, order: ByteOrder = 'host'): Datatype {
  const k = `${size}${order}`;
  let t = integers.get(k);
  if (!t) integers.set(k, (t = Object.freeze(integerType(TYPE_INTEGER, 'integer', size, order, false))));
  return t;
}

const BY_ID = new Map<number, Datatype>(
  [ipv4_addr, ipv6_addr, inet_proto, inet_service, mark, nf_proto, ct_state, ct_status, fib_addrtype, ether_addr, ifname, icmp_type, icmpv6_type, icmp_code, icmpv6_code, tcp_flag, dscp, boolean].map(
    (t) => [t.id, t],
  ),
);
const BY_NAME = new Map<string, Datatype>([...BY_ID.values()].map((t) => [t.name, t]));

export function datatypeByName(name: string): Datatype {
  if (name === 'integer') return integer();
  const t = BY_NAME.get(name);
  if (!t) throw new RangeError(`unknown data type "${name}" (known: integer, ${[...BY_NAME.keys()].join(', ')})`);
  return t;
}

/** Concatenated fields take whole 32-bit registers: each is padded to a multiple of 4 bytes. */
export function paddedSize(t: Datatype): number {
  // Integer arithmetic, not Math.ceil: a builtin call for every value of every element until V8
  // has optimised the element loops (most of a 10k-element list runs before that, Node 20).
  return (t.size + 3) & ~3;
}

/** The key (or data) type id and length nft stores for a list of types. */
export function typeIdOf(types: readonly Datatype[]): { id: number; len: number } {
  if (types.length === 1) return { id: types[0]!.id, len: types[0]!.size };
  let id = 0;
  let len = 0;
  for (const t of types) {
    id = (id << TYPE_BITS) | t.id;
    len += paddedSize(t);
  }
  return { id: id >>> 0, len };
}

/**
 * Splits a stored type id back into the datatypes it folds. `len` disambiguates single integers
 * of other widths (a `type integer` key of 2 bytes, say).
 */
export function typesFromId(id: number, len: number): Datatype[] {
  const ids: number[] = [];
  let rest = id >>> 0;
  while (rest > 0) {
    ids.unshift(rest & ((1 << TYPE_BITS) - 1));
    rest = Math.floor(rest / (1 << TYPE_BITS));
  }
  if (ids.length <= 1) {
    const t = BY_ID.get(id);
    if (t && t.size === len) return [t];
    return [integer(len, 'host')];
  }
  const types = ids.map((i) => BY_ID.get(i) ?? integer(4, 'host'));
  const total = types.reduce((s, t) => s + paddedSize(t), 0);
  if (total !== len) return [integer(len, 'host')];
  return types;
}
