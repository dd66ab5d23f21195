// libnftnl's attribute ids (libnftnl 1.2.x, include/libnftnl/*.h). These, not the kernel's NFTA_*
// numbers, are what the compact format carries: the addon hands them to nftnl_*_set_data() and
// libnftnl builds the netlink attributes. The addon checks every id and size (native/README.md).

export const TABLE_ATTR = { NAME: 0, FAMILY: 1, FLAGS: 2, USE: 3, HANDLE: 4, USERDATA: 5, OWNER: 6 } as const;

export const CHAIN_ATTR = {
  NAME: 0,
  FAMILY: 1,
  TABLE: 2,
  HOOKNUM: 3,
  PRIO: 4,
  POLICY: 5,
  USE: 6,
  BYTES: 7,
  PACKETS: 8,
  HANDLE: 9,
  TYPE: 10,
  DEV: 11,
  DEVICES: 12,
  FLAGS: 13,
  ID: 14,
  USERDATA: 15,
} as const;

export const RULE_ATTR = {
  FAMILY: 0,
  TABLE: 1,
  CHAIN: 2,
  HANDLE: 3,
  COMPAT_PROTO: 4,
  COMPAT_FLAGS: 5,
  POSITION: 6,
  USERDATA: 7,
  ID: 8,
  POSITION_ID: 9,
} as const;

export const SET_ATTR = {
  TABLE: 0,
  NAME: 1,
  FLAGS: 2,
  KEY_TYPE: 3,
  KEY_LEN: 4,
  DATA_TYPE: 5,
  DATA_LEN: 6,
  FAMILY: 7,
  ID: 8,
  POLICY: 9,
  DESC_SIZE: 10,
  TIMEOUT: 11,
  GC_INTERVAL: 12,
  USERDATA: 13,
  OBJ_TYPE: 14,
  HANDLE: 15,
  DESC_CONCAT: 16,
} as const;

export const ELEM_ATTR = {
  FLAGS: 0,
  KEY: 1,
  VERDICT: 2,
  CHAIN: 3,
  DATA: 4,
  TIMEOUT: 5,
  EXPIRATION: 6,
  USERDATA: 7,
  OBJREF: 9,
  KEY_END: 10,
} as const;

/** Named objects (libnftnl object.h): ids from OBJ_BASE (16) on depend on the object's type. */
export const OBJ_ATTR = { TABLE: 0, NAME: 1, TYPE: 2, FAMILY: 3, USE: 4, HANDLE: 5, USERDATA: 6, BASE: 16 } as const;
/** The typed ids of each object type, as offsets from OBJ_ATTR.BASE. */
export const OBJ_TYPED_ATTR = {
  counter: { PACKETS: 0, BYTES: 1 },
  quota: { BYTES: 0, CONSUMED: 1, FLAGS: 2 },
  ctHelper: { NAME: 0, L3PROTO: 1, L4PROTO: 2 },
  ctTimeout: { L3PROTO: 0, L4PROTO: 1, ARRAY: 2 },
  ctExpect: { L3PROTO: 0, L4PROTO: 1, DPORT: 2, TIMEOUT: 3, SIZE: 4 },
  limit: { RATE: 0, UNIT: 1, BURST: 2, TYPE: 3, FLAGS: 4 },
  synproxy: { MSS: 0, WSCALE: 1, FLAGS: 2 },
  secmark: { CTX: 0 },
} as const;

export const FLOWTABLE_ATTR = { NAME: 0, FAMILY: 1, TABLE: 2, HOOKNUM: 3, PRIO: 4, USE: 5, DEVICES: 6, SIZE: 7, FLAGS: 8, HANDLE: 9 } as const;

/** Expression attributes start at NFTNL_EXPR_BASE (1); id 0 is the expression's name. */
export const EXPR_ATTR = {
  payload: { DREG: 1, BASE: 2, OFFSET: 3, LEN: 4, SREG: 5, CSUM_TYPE: 6, CSUM_OFFSET: 7, FLAGS: 8 },
  numgen: { DREG: 1, MODULUS: 2, TYPE: 3, OFFSET: 4 },
  meta: { KEY: 1, DREG: 2, SREG: 3 },
  cmp: { SREG: 1, OP: 2, DATA: 3 },
  range: { SREG: 1, OP: 2, FROM_DATA: 3, TO_DATA: 4 },
  immediate: { DREG: 1, DATA: 2, VERDICT: 3, CHAIN: 4, CHAIN_ID: 5 },
  counter: { PACKETS: 1, BYTES: 2 },
  bitwise: { SREG: 1, DREG: 2, LEN: 3, MASK: 4, XOR: 5, OP: 6, DATA: 7 },
  nat: { TYPE: 1, FAMILY: 2, REG_ADDR_MIN: 3, REG_ADDR_MAX: 4, REG_PROTO_MIN: 5, REG_PROTO_MAX: 6, FLAGS: 7 },
  lookup: { SREG: 1, DREG: 2, SET: 3, SET_ID: 4, FLAGS: 5 },
  dynset: { SREG_KEY: 1, SREG_DATA: 2, OP: 3, TIMEOUT: 4, SET_NAME: 5, SET_ID: 6, EXPR: 7, EXPRESSIONS: 8, FLAGS: 9 },
  log: { PREFIX: 1, GROUP: 2, SNAPLEN: 3, QTHRESHOLD: 4, LEVEL: 5, FLAGS: 6 },
  ct: { DREG: 1, KEY: 2, DIR: 3, SREG: 4 },
  byteorder: { DREG: 1, SREG: 2, OP: 3, LEN: 4, SIZE: 5 },
  limit: { RATE: 1, UNIT: 2, BURST: 3, TYPE: 4, FLAGS: 5 },
  reject: { TYPE: 1, CODE: 2 },
  masq: { FLAGS: 1, REG_PROTO_MIN: 2, REG_PROTO_MAX: 3 },
  redir: { REG_PROTO_MIN: 1, REG_PROTO_MAX: 2, FLAGS: 3 },
  fib: { DREG: 1, RESULT: 2, FLAGS: 3 },
  objref: { IMM_TYPE: 1, IMM_NAME: 2, SET_SREG: 3, SET_NAME: 4, SET_ID: 5 },
  flow_offload: { TABLE_NAME: 1 },
} as const;

/** Userdata TLV types (libnftnl udata.h). */
export const UDATA = {
  TABLE_COMMENT: 0,
  CHAIN_COMMENT: 0,
  RULE_COMMENT: 0,
  SET_KEYBYTEORDER: 0,
  SET_DATABYTEORDER: 1,
  SET_MERGE_ELEMENTS: 2,
  SET_KEY_TYPEOF: 3,
  SET_DATA_TYPEOF: 4,
  SET_EXPR: 5,
  SET_DATA_INTERVAL: 6,
  SET_COMMENT: 7,
  /**
   * nftlink's own: an anonymous set's elements digest (inline-set.ts). Far above nft's types,
   * which nft's parser skips when it does not know them; the addon looks for it in dumps.
   */
  SET_ELEMENTS_DIGEST: 0xc8,
  /** nftlink's own: a rule's expressions digest (rule-digest.ts); the addon looks for it in dumps. */
  RULE_EXPRS_DIGEST: 0xc9,
  /** nftlink's own: the rule's tag (Rule.tag). */
  RULE_TAG: 0xca,
  SET_TYPEOF_EXPR: 0,
  SET_TYPEOF_DATA: 1,
  SET_ELEM_COMMENT: 0,
  SET_ELEM_FLAGS: 1,
} as const;
