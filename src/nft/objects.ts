// The object model: plain data, the same shapes for what callers write and what a dump reads back.
// Field names follow nft's vocabulary; anything the kernel assigns (handles) is optional.

import type { Expr } from './expr/index.js';
import type { Family, Hook } from './netlink/constants.js';
import type { Datatype, Scalar } from './types/datatypes.js';
import type { SetTypeof } from './types/typeof.js';
import type { Verdict } from './types/verdict.js';
import type { Flowtable, NftObject, NftObjectType } from './named-objects.js';

export type { Family, Hook };

export interface Table {
  family: Family;
  name: string;
  /** `dormant` stops the table's hooks; `owner` (Linux 5.12) ties the table to the socket. */
  flags?: readonly ('dormant' | 'owner')[];
  comment?: string;
  handle?: number;
}

// The names of the fields below that take one of a few, as lists the encoder checks callers
// without TypeScript against (validate.ts).
export const CHAIN_TYPES = ['filter', 'nat', 'route'] as const;
export const CHAIN_POLICIES = ['accept', 'drop'] as const;
export const SET_FLAGS = ['constant', 'interval', 'timeout', 'dynamic'] as const;
export const SET_POLICIES = ['performance', 'memory'] as const;

export type ChainType = (typeof CHAIN_TYPES)[number];

export interface BaseChainSpec {
  type: ChainType;
  hook: Hook;
  priority: number;
  policy?: (typeof CHAIN_POLICIES)[number];
  /**
   * Ingress (and netdev egress) chains: the interfaces the chain hooks on. The netdev family's
   * chains need at least one (several since Linux 5.5); inet ingress chains are Linux 5.10.
   */
  devices?: readonly string[];
}

export interface Chain {
  family: Family;
  table: string;
  name: string;
  /** Present for base chains: where in the stack the chain hooks in. */
  base?: BaseChainSpec;
  comment?: string;
  handle?: number;
}

export interface Rule {
  family: Family;
  table: string;
  chain: string;
  exprs: readonly Expr[];
  comment?: string;
  /**
   * The writer's own text kept with the rule (at most 64 bytes), in its userdata beside the
   * comment, which nft neither prints nor needs. Every dump reads it back, also one that leaves the
   * expressions out (DumpOptions.ruleExprs): a writer can keep there what it must learn back from
   * its rules.
   */
  tag?: string;
  /**
   * Only in a dump with `ruleExprs: false`, on a rule nftlink wrote: its expressions were left out
   * (`exprs` is empty) and this is what they are known by (rule-digest.ts). Such a rule compares
   * (sameRule) but cannot be written back.
   */
  exprsDigest?: number;
  /** The kernel's handle: read back from dumps; needed to replace or delete a rule. */
  handle?: number;
  /** For add/insert: the handle of the rule to add after (add) or before (insert). */
  position?: number;
}

export type SetFlag = (typeof SET_FLAGS)[number];

export interface NftSet {
  family: Family;
  table: string;
  name: string;
  /** One type, or several for a concatenation (`ipv4_addr . inet_proto . inet_service`). */
  key: readonly Datatype[];
  /** Present for maps: the data types, or 'verdict' for a verdict map. */
  data?: readonly Datatype[] | 'verdict';
  /**
   * A map of named objects of this type (`type ipv4_addr : counter`), instead of `data`: each
   * element's `value` is an object's name, `['web']`; rules pick from it with
   * `counter name ip saddr map @m` (objref). Plain (non-interval) maps only.
   */
  objects?: NftObjectType;
  /**
   * Declare the key (and data) by the expressions that produce them (`typeof ...`), as nft needs
   * for a key nft has no type name for, such as a numgen slot. `key` and `data` still give the types.
   */
  typeof?: SetTypeof;
  flags?: readonly SetFlag[];
  /** Default element timeout in milliseconds. */
  timeout?: number;
  gcInterval?: number;
  size?: number;
  policy?: (typeof SET_POLICIES)[number];
  comment?: string;
  /** Anonymous sets are bound to one rule and printed inline by nft. */
  anonymous?: boolean;
  /**
   * An anonymous set nftlink wrote: the digest of its types and elements that it keeps in the
   * set's userdata (inline-set.ts). A dump with `anonymousElements: false` reads such sets
   * without their elements; their rules still compare, by this digest.
   */
  elementsDigest?: string;
  handle?: number;
  /** Elements, when a dump read them (or when a transaction adds them with the set). */
  elements?: readonly SetElement[];
  /**
   * From a dump with `elementKeys: true`, for sets without intervals: each element's identity
   * (what `elementKey` computes), read from the kernel's key bytes, parallel to `elements`.
   */
  elementKeys?: readonly string[];
  /**
   * From a dump whose `hashElements` picked this set: its elements as sorted, distinct hashes
   * (elementHashes), made from the kernel's bytes; `elements` and `elementKeys` are then decoded
   * when first read.
   */
  elementHashes?: Float64Array;
}

export interface SetElement {
  /** One value per key type. In an interval set a single field may be "198.18.0.0/15" or "1000-2000". */
  key: readonly Scalar[];
  /** Inclusive end of an interval element (decoded dumps set it; callers may too). */
  keyEnd?: readonly Scalar[];
  /** Map data: one value per data type, or a verdict. */
  value?: readonly Scalar[] | Verdict;
  /** Milliseconds. */
  timeout?: number;
  /** Milliseconds left before the element expires (dumps only). */
  expires?: number;
  comment?: string;
}

/** What a dump returns: everything in kernel order, with the generation it belongs to. */
export interface Ruleset {
  generation: number;
  tables: Table[];
  chains: Chain[];
  sets: NftSet[];
  rules: Rule[];
  /** Named stateful objects (counter, quota, limit, ct helper, ...), when the dump read them. */
  objects?: NftObject[];
  /** Flowtables, when the dump read them. */
  flowtables?: Flowtable[];
}

/**
 * A ruleset as it is read (renderRuleset, Reconciler.resync): a dump, a DesiredState, or objects
 * written `as const`.
 */
export interface RulesetObjects {
  readonly tables: readonly Table[];
  readonly chains: readonly Chain[];
  readonly sets: readonly NftSet[];
  readonly rules: readonly Rule[];
  readonly objects?: readonly NftObject[];
  readonly flowtables?: readonly Flowtable[];
  /** A dump's generation (ignored by what reads a ruleset). */
  readonly generation?: number;
}

/** A reference to a set by name. Element operations need the key (and data) types to encode values. */
export interface SetRef {
  family: Family;
  table: string;
  name: string;
}
