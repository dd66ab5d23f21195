// What a program needs of a connection to nf_tables: commit, check, dump, generation. `Nftables`
// (client.ts) is the kernel's; `FakeNftables` (src/testing) keeps a ruleset in memory with the
// kernel's semantics, for tests that cannot or need not run as root. Code that programs nftables
// takes this interface from its caller, as kube-proxy takes knftables.Interface, so that the same
// code runs against either.

import type { NftSet, Ruleset, SetElement } from './objects.js';
import type { Transaction, TransactionOptions } from './transaction.js';
import type { Family } from './netlink/constants.js';
import type { MonitorOptions } from './monitor/events.js';
import type { NftMonitor } from './monitor/nft-monitor.js';

/** What a committed transaction tells back. */
export interface CommitResult {
  /**
   * Operation index -> the kernel handle of the rule it added, inserted or replaced, for every
   * operation queued with `{ echo: true }`. An echoed operation missing here had its echo dropped by
   * the kernel (see `missingHandles`).
   */
  ruleHandles: Map<number, number>;
  /**
   * Echoed operations the kernel sent no handle for, in index order; normally empty. The rule is
   * committed all the same: dump its chain to find it.
   */
  missingHandles: number[];
}

export interface CommitOptions {
  /** Refuse the batch unless the ruleset is still at this generation (compare-and-swap). */
  generation?: number;
}

export interface DumpOptions {
  family?: Family;
  table?: string;
  /** Only this chain's rules (with `table`): nothing else is dumped. */
  chain?: string;
  /** Leave out set elements (faster when only the structure is needed). */
  elements?: boolean;
  /**
   * `false`: leave out the chains and their rules (tables, sets, objects and flowtables only), for
   * a reader that needs the sets alone (the monitor's types for decoding elements). The anonymous
   * sets, which no rule then holds, are listed among the sets (`anonymous: true`).
   */
  chains?: boolean;
  /**
   * `false`: leave out the elements of the anonymous sets nftlink wrote (those with an
   * `elementsDigest`), which rules then compare by digest (sameRule). The kernel finds each
   * anonymous set by name in a list of all the table's sets, again for each part of its dump, so
   * a table with thousands of inline sets dumps far faster without them. Such rules cannot be
   * written back as they are read.
   */
  anonymousElements?: boolean;
  /**
   * Also give each set's element identities as the kernel's bytes spell them (NftSet.elementKeys),
   * so that a caller keying elements by identity need not encode every decoded value back.
   */
  elementKeys?: boolean;
  /**
   * Sets (of those without intervals) whose elements the caller compares by hashes
   * (elementHashes): the dump gives them as NftSet.elementHashes, made from the kernel's bytes by
   * the addon on its own thread, and decodes their elements only when `elements` is first read. A
   * restart that finds its sets unchanged then never makes their element objects.
   */
  hashElements?: (set: NftSet) => boolean;
  /**
   * Named sets of `table` whose elements the dump leaves out (their `elements` stay undefined).
   * The kernel's element dump starts each message by walking past every element it sent before, so
   * reading a set costs the square of its size: 500k elements take it seconds. A caller that will
   * replace such a set's contents anyway (flush and add) need not read them.
   */
  omitElementsOf?: readonly string[];
  /**
   * Reads the table's rules with one request per chain (needs `table`). The kernel resumes a dump
   * of a table's rules by walking past every rule it sent before, so one dump costs the square of
   * the rule count: seconds at 100k chains. Given a chain, it looks that chain up by name. A request
   * per chain costs a round trip each, which is cheaper only for large tables.
   */
  perChainRules?: boolean;
  /**
   * `false`: leave out the expressions of the rules nftlink wrote, which then come with
   * `exprsDigest` instead and compare by it (sameRule; rule-digest.ts). Decoding every rule's
   * expressions is most of what reading a large table costs; a caller that only compares its
   * rules with those it would write need not. Rules others wrote (with nft) come whole. Such
   * rules cannot be written back as they are read.
   */
  ruleExprs?: boolean;
}

/** Refuses options that do not go together (the same for the kernel's connection and the fake). */
export function checkDumpOptions(opts: DumpOptions): void {
  if (opts.chains === false && (opts.chain !== undefined || opts.perChainRules)) throw new TypeError('nftlink: dump(): chains: false leaves out the rules that `chain` and perChainRules ask for');
  if (opts.omitElementsOf?.length && opts.table === undefined) throw new TypeError('nftlink: dump(): omitElementsOf names sets of one table: give its `table`');
  if (opts.perChainRules && opts.table === undefined) throw new TypeError('nftlink: dump(): perChainRules reads the chains of one table: give its `table`');
}

export interface NftConnection {
  /**
   * A transaction for this connection (the kernel's may convert its parts while it is built);
   * a plain `new Transaction(opts)` commits on any connection as well.
   */
  transaction(opts?: TransactionOptions): Transaction;
  /**
   * Applies the transaction atomically; throws NftCommitError (nothing applied) if it is refused,
   * NftGenerationError if `generation` no longer holds.
   */
  commit(tx: Transaction, opts?: CommitOptions): Promise<CommitResult>;
  /** Validates the transaction without applying it. */
  check(tx: Transaction): Promise<void>;
  /** Reads tables, chains, sets (with elements) and rules, all from one generation. */
  dump(opts?: DumpOptions): Promise<Ruleset>;
  /** One set's elements, decoded with the set's types. */
  dumpSetElements(set: NftSet): Promise<{ generation: number; elements: readonly SetElement[] }>;
  /** The ruleset's generation: every committed transaction moves it on. */
  generation(): Promise<number>;
  close(): void;
}

/**
 * A connection that can also watch the ruleset (Nftables and FakeNftables are both). Separate from
 * NftConnection so that code needing only commits and dumps keeps accepting any NftConnection.
 */
export interface MonitoringConnection extends NftConnection {
  /**
   * The ruleset's changes as they are committed, one transaction per event (the kernel's: by any
   * process; the fake's: its own commits). `for await (const ev of conn.monitor())`; leave the loop
   * to unsubscribe.
   */
  monitor(opts?: MonitorOptions): NftMonitor;
}
