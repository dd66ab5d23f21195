// Kernel constants of nf_tables (include/uapi/linux/netfilter/nf_tables.h, netlink.h, netfilter.h).
// Values are ABI: they never change once a kernel ships them. Where a value is newer than the
// kernels we support, the comment says which kernel added it.

/** nfnetlink message types of the nf_tables subsystem (enum nf_tables_msg_types). */
export const NFT_MSG = {
  NEWTABLE: 0,
  GETTABLE: 1,
  DELTABLE: 2,
  NEWCHAIN: 3,
  GETCHAIN: 4,
  DELCHAIN: 5,
  NEWRULE: 6,
  GETRULE: 7,
  DELRULE: 8,
  NEWSET: 9,
  GETSET: 10,
  DELSET: 11,
  NEWSETELEM: 12,
  GETSETELEM: 13,
  DELSETELEM: 14,
  NEWGEN: 15,
  GETGEN: 16,
  NEWOBJ: 18,
  GETOBJ: 19,
  DELOBJ: 20,
  NEWFLOWTABLE: 22,
  GETFLOWTABLE: 23,
  DELFLOWTABLE: 24,
  // DESTROY* (Linux 6.3): delete that does not fail when the object is missing.
  DESTROYTABLE: 26,
  DESTROYCHAIN: 27,
  DESTROYRULE: 28,
  DESTROYSET: 29,
  DESTROYSETELEM: 30,
  DESTROYOBJ: 31,
  DESTROYFLOWTABLE: 32,
} as const;

/** Netlink message header flags the kernel reads on nf_tables requests. */
export const NLM_F = {
  /** On NEWRULE: the kernel sends the committed rule back to us, with its handle. */
  ECHO: 0x8,
  REPLACE: 0x100,
  EXCL: 0x200,
  CREATE: 0x400,
  APPEND: 0x800,
} as const;

/** Address families (NFPROTO_*). */
export const NFPROTO = {
  unspec: 0,
  inet: 1,
  ip: 2,
  arp: 3,
  netdev: 5,
  bridge: 7,
  ip6: 10,
} as const;

export type Family = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

export const FAMILY_BY_NUMBER: Record<number, Family> = {
  1: 'inet',
  2: 'ip',
  3: 'arp',
  5: 'netdev',
  7: 'bridge',
  10: 'ip6',
};

/** Netfilter hooks of the ip, ip6 and inet families (NF_INET_*). */
export const NF_INET_HOOK = {
  prerouting: 0,
  input: 1,
  forward: 2,
  output: 3,
  postrouting: 4,
  ingress: 5,
} as const;
/** Hooks of the netdev family (NF_NETDEV_*; egress is Linux 5.16). Flowtables hook at ingress, 0. */
export const NF_NETDEV_HOOK = { ingress: 0, egress: 1 } as const;
/** A base chain's hook by name: the inet families' (ingress since Linux 5.10) and netdev's egress. */
export type Hook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting' | 'ingress' | 'egress';
// Every hook name has a number in one of the tables (a compile-time check that the two agree).
const _hooksNumbered: Record<Hook, number> = { ...NF_INET_HOOK, ...NF_NETDEV_HOOK };
void _hooksNumbered;

/** Table flags (NFT_TABLE_F_*). */
export const NFT_TABLE_F = { dormant: 0x1, owner: 0x2 } as const;

/** Registers: the verdict register, four 128-bit registers, and their 32-bit views (Linux 4.1). */
export const NFT_REG = {
  VERDICT: 0,
  R1: 1,
  R2: 2,
  R3: 3,
  R4: 4,
  /** NFT_REG32_00: the first 32-bit register; NFT_REG32_00 + n is the n-th (0..15). */
  R32_00: 8,
} as const;

/** Verdict codes: netfilter's NF_DROP/NF_ACCEPT and nf_tables' negative NFT_* codes (u32, two's complement). */
export const VERDICT_CODE = {
  drop: 0,
  accept: 1,
  continue: -1 >>> 0,
  break: -2 >>> 0,
  jump: -3 >>> 0,
  goto: -4 >>> 0,
  return: -5 >>> 0,
} as const;

/** Data type marker of a verdict map (NFT_DATA_VERDICT). */
export const NFT_DATA_VERDICT = 0xffffff00;

export const NFT_PAYLOAD_BASE = { ll: 0, network: 1, transport: 2, inner: 3 } as const;
export type PayloadBase = keyof typeof NFT_PAYLOAD_BASE;

export const NFT_CMP = { eq: 0, neq: 1, lt: 2, lte: 3, gt: 4, gte: 5 } as const;
export type CmpOp = keyof typeof NFT_CMP;

export const NFT_RANGE = { eq: 0, neq: 1 } as const;

export const NFT_BITWISE = { bool: 0, lshift: 1, rshift: 2 } as const;

export const NFT_LOOKUP_F_INV = 0x1;

/** Meta keys (enum nft_meta_keys). */
export const NFT_META = {
  len: 0,
  protocol: 1,
  priority: 2,
  mark: 3,
  iif: 4,
  oif: 5,
  iifname: 6,
  oifname: 7,
  iiftype: 8,
  oiftype: 9,
  skuid: 10,
  skgid: 11,
  nftrace: 12,
  rtclassid: 13,
  secmark: 14,
  nfproto: 15,
  l4proto: 16,
  bri_iifname: 17,
  bri_oifname: 18,
  pkttype: 19,
  cpu: 20,
  iifgroup: 21,
  oifgroup: 22,
  cgroup: 23,
  prandom: 24,
} as const;
export type MetaKey = keyof typeof NFT_META;

/** Conntrack keys (enum nft_ct_keys). */
export const NFT_CT = {
  state: 0,
  direction: 1,
  status: 2,
  mark: 3,
  secmark: 4,
  expiration: 5,
  helper: 6,
  l3protocol: 7,
  src: 8,
  dst: 9,
  protocol: 10,
  proto_src: 11,
  proto_dst: 12,
  labels: 13,
  pkts: 14,
  bytes: 15,
  avgpkt: 16,
  zone: 17,
  eventmask: 18,
} as const;
export type CtKey = keyof typeof NFT_CT;

/** Conntrack state bits as the ct expression reports them (NF_CT_STATE_BIT). */
export const CT_STATE_BITS = { invalid: 1, established: 2, related: 4, new: 8, untracked: 64 } as const;

/** Conntrack status bits (enum ip_conntrack_status). */
export const CT_STATUS_BITS = {
  expected: 1,
  seen_reply: 2,
  assured: 4,
  confirmed: 8,
  snat: 16,
  dnat: 32,
  dying: 512,
} as const;

export const NFT_NAT = { snat: 0, dnat: 1 } as const;

/** NAT range flags (NF_NAT_RANGE_*). */
export const NF_NAT_RANGE = {
  MAP_IPS: 0x1,
  PROTO_SPECIFIED: 0x2,
  PROTO_RANDOM: 0x4,
  PERSISTENT: 0x8,
  PROTO_RANDOM_FULLY: 0x10,
  PROTO_OFFSET: 0x20,
  NETMAP: 0x40,
} as const;

export const NFT_NG = { inc: 0, random: 1 } as const;

export const NFT_DYNSET_OP = { add: 0, update: 1, delete: 2 } as const;
export const NFT_DYNSET_F_INV = 0x1;

/** Set flags (NFT_SET_*). */
export const NFT_SET_F = {
  anonymous: 0x1,
  constant: 0x2,
  interval: 0x4,
  map: 0x8,
  timeout: 0x10,
  eval: 0x20,
  object: 0x40,
  concat: 0x80,
  expr: 0x100,
} as const;

/** Set element flags (NFT_SET_ELEM_*). */
export const NFT_SET_ELEM_F = { interval_end: 0x1, catchall: 0x2 } as const;

export const NFT_REJECT = { icmp_unreach: 0, tcp_rst: 1, icmpx_unreach: 2 } as const;

/** Codes of `reject with icmpx` (NFT_REJECT_ICMPX_*). */
export const ICMPX_CODE = { 'no-route': 0, 'port-unreachable': 1, 'host-unreachable': 2, 'admin-prohibited': 3 } as const;
/** ICMP destination-unreachable codes. */
export const ICMP_CODE = {
  'net-unreachable': 0,
  'host-unreachable': 1,
  'prot-unreachable': 2,
  'port-unreachable': 3,
  'net-prohibited': 9,
  'host-prohibited': 10,
  'admin-prohibited': 13,
} as const;
/** ICMPv6 destination-unreachable codes. */
export const ICMPV6_CODE = {
  'no-route': 0,
  'admin-prohibited': 1,
  'addr-unreachable': 3,
  'port-unreachable': 4,
  'policy-fail': 5,
  'reject-route': 6,
} as const;

export const NFTA_FIB_F = { saddr: 0x1, daddr: 0x2, mark: 0x4, iif: 0x8, oif: 0x10, present: 0x20 } as const;
export const NFT_FIB_RESULT = { oif: 1, oifname: 2, type: 3 } as const;
/** Route types that `fib ... type` yields (RTN_*). */
export const RTN = {
  unspec: 0,
  unicast: 1,
  local: 2,
  broadcast: 3,
  anycast: 4,
  multicast: 5,
  blackhole: 6,
  unreachable: 7,
  prohibit: 8,
} as const;

export const NFT_LIMIT = { pkts: 0, pkt_bytes: 1 } as const;
export const NFT_LIMIT_F_INV = 0x1;
/** NFT_QUOTA_F_INV: a quota that matches once it is used up. */
export const NFT_QUOTA_F_INV = 0x1;
/** NF_SYNPROXY_OPT_*: the TCP options a synproxy sets. */
export const SYNPROXY_OPT = { mss: 0x1, wscale: 0x2, sackPerm: 0x4, timestamp: 0x8 } as const;

/** Log flags and levels. */
export const NF_LOG_FLAGS = { tcpseq: 0x1, tcpopt: 0x2, ipopt: 0x4, uid: 0x8, macdecode: 0x20 } as const;
export const LOG_LEVEL = { emerg: 0, alert: 1, crit: 2, err: 3, warn: 4, notice: 5, info: 6, debug: 7, audit: 8 } as const;

export const NFT_BYTEORDER = { ntoh: 0, hton: 1 } as const;

/** Chain priorities by name, as nft spells them (family ip/ip6/inet). */
export const NF_IP_PRI = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
} as const;

/** Kernel limits (NFT_NAME_MAXLEN includes the NUL; NFT_USERDATA_MAXLEN). */
export const NFT_NAME_MAXLEN = 256;
export const NFT_USERDATA_MAXLEN = 256;
export const NFT_COMMENT_MAXLEN = 128;

export const ERRNO = {
  EPERM: 1,
  ENOENT: 2,
  EINTR: 4,
  EIO: 5,
  E2BIG: 7,
  EBADF: 9,
  EAGAIN: 11,
  ENOMEM: 12,
  EBUSY: 16,
  EEXIST: 17,
  ENODEV: 19,
  EINVAL: 22,
  ENFILE: 23,
  ENOSPC: 28,
  EMLINK: 31,
  ERANGE: 34,
  ELOOP: 40,
  ENODATA: 61,
  EMSGSIZE: 90,
  EPROTONOSUPPORT: 93,
  EOPNOTSUPP: 95,
  ENOBUFS: 105,
  ERESTART: 85,
} as const;

export const ERRNO_NAME: Record<number, string> = Object.fromEntries(
  Object.entries(ERRNO).map(([name, num]) => [num, name]),
);
