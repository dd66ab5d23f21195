// Named stateful objects (`counter`, `quota`, `limit`, `ct helper`, ...) and flowtables: the
// table-level objects besides chains and sets, as plain data in nft's vocabulary. Rules refer to
// objects by name (expr/objref.ts) and to flowtables with `flow add @name` (expr/flow-offload.ts).

import type { Family } from './netlink/constants.js';

interface NamedObjectBase {
  family: Family;
  table: string;
  name: string;
  comment?: string;
  /** The kernel's handle (dumps). */
  handle?: number;
}

/** `counter NAME`: packets and bytes of every rule that names it. */
export interface CounterObject extends NamedObjectBase {
  type: 'counter';
  /** Initial (or dumped) counts. */
  packets?: bigint;
  bytes?: bigint;
}

/** `quota NAME`: matches until `bytes` have passed (`over`: once they have). */
export interface QuotaObject extends NamedObjectBase {
  type: 'quota';
  bytes: bigint | number;
  over?: boolean;
  /** Bytes already counted against the quota. */
  used?: bigint | number;
}

export const LIMIT_PERIODS = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800 } as const;
export type LimitPeriod = keyof typeof LIMIT_PERIODS;

/** `limit NAME`: a token bucket of `rate` packets (or bytes) per `per`. */
export interface LimitObject extends NamedObjectBase {
  type: 'limit';
  rate: number;
  per: LimitPeriod;
  /** Packets, or bytes with `unit: 'bytes'` (0: the kernel's default, 5 packets). */
  burst?: number;
  unit?: 'packets' | 'bytes';
  /** Matches once the rate is exceeded. */
  over?: boolean;
}

export const CT_L4PROTOS = { tcp: 6, udp: 17, dccp: 33, sctp: 132, udplite: 136 } as const;
export type CtL4proto = keyof typeof CT_L4PROTOS;
/** The layer-3 family of a ct object (NFPROTO_*): `inet` is both. */
export const CT_L3PROTOS = { inet: 1, ip: 2, ip6: 10 } as const;
export type CtL3proto = keyof typeof CT_L3PROTOS;

/** `ct helper NAME`: a conntrack helper (`ftp`, `sip`, ...) that rules assign with `ct helper set`. */
export interface CtHelperObject extends NamedObjectBase {
  type: 'ct helper';
  /** The kernel helper's name, at most 15 bytes. */
  helper: string;
  protocol: CtL4proto;
  /** Default: the table's family (`inet` for inet tables). */
  l3proto?: CtL3proto;
}

/** Conntrack states of ct timeout policies, in the kernel's order (libnftnl's enum). */
export const CT_TIMEOUT_STATES = {
  tcp: ['syn_sent', 'syn_recv', 'established', 'fin_wait', 'close_wait', 'last_ack', 'time_wait', 'close', 'syn_sent2', 'retrans', 'unack'],
  udp: ['unreplied', 'replied'],
} as const;

/**
 * The kernel's default timeouts (seconds) per state, as libnftnl and nft know them: a dump carries
 * every state, and nft lists (and nftlink reads back) only those that differ from these.
 */
export const CT_TIMEOUT_DEFAULTS = {
  tcp: [120, 60, 432000, 120, 60, 30, 120, 10, 120, 300, 300],
  udp: [30, 180],
} as const;

/** `ct timeout NAME`: per-state conntrack timeouts that rules assign with `ct timeout set`. */
export interface CtTimeoutObject extends NamedObjectBase {
  type: 'ct timeout';
  protocol: keyof typeof CT_TIMEOUT_STATES;
  l3proto?: CtL3proto;
  /**
   * Seconds per state (CT_TIMEOUT_STATES); states not given keep the kernel's default. A dump
   * lists only states whose timeout differs from CT_TIMEOUT_DEFAULTS, as nft does.
   */
  policy: Readonly<Record<string, number>>;
}

/** `ct expectation NAME`: an expectation that rules create with `ct expectation set`. */
export interface CtExpectationObject extends NamedObjectBase {
  type: 'ct expectation';
  protocol: CtL4proto;
  l3proto?: CtL3proto;
  dport: number;
  /** Milliseconds. */
  timeout: number;
  /** How many expectations at most. */
  size: number;
}

/** `synproxy NAME`: SYN cookie proxy parameters for `synproxy name`. */
export interface SynproxyObject extends NamedObjectBase {
  type: 'synproxy';
  mss: number;
  wscale: number;
  timestamp?: boolean;
  sackPerm?: boolean;
}

/** `secmark NAME`: an SELinux context for `meta secmark set`. */
export interface SecmarkObject extends NamedObjectBase {
  type: 'secmark';
  context: string;
}

export type NftObject =
  | CounterObject
  | QuotaObject
  | LimitObject
  | CtHelperObject
  | CtTimeoutObject
  | CtExpectationObject
  | SynproxyObject
  | SecmarkObject;

export type NftObjectType = NftObject['type'];

/** NFT_OBJECT_* numbers of the types nftlink models (5 connlimit and 6 tunnel are not). */
export const NFT_OBJECT: Readonly<Record<NftObjectType, number>> = {
  counter: 1,
  quota: 2,
  'ct helper': 3,
  limit: 4,
  'ct timeout': 7,
  secmark: 8,
  'ct expectation': 9,
  synproxy: 10,
};
export const OBJECT_TYPES = Object.keys(NFT_OBJECT) as NftObjectType[];

/** A reference to a named object: what delete needs (the kernel finds objects by type and name). */
export interface NftObjectRef {
  family: Family;
  table: string;
  name: string;
  type: NftObjectType;
  handle?: number;
}

/**
 * `flowtable NAME`: the fast path that `flow add @NAME` offloads established connections to,
 * bypassing the forward path on the listed devices. Hooks at ingress only.
 */
export interface Flowtable {
  family: Family;
  table: string;
  name: string;
  /** Always ingress (the only flowtable hook). */
  hook?: 'ingress';
  priority: number;
  /** Interface names, at least one to take traffic. */
  devices: readonly string[];
  /** `offload`: hardware offload (NF_FLOWTABLE_HW_OFFLOAD); `counter` (Linux 5.7). */
  flags?: readonly ('offload' | 'counter')[];
  handle?: number;
}

export const FLOWTABLE_FLAGS = { offload: 0x1, counter: 0x2 } as const;
