// The connection to nf_tables in one network namespace: commit, check, dump, generation.

import { loadNative, type NativeBinding, type NativeError, type NativeHandle, type NativeRuleHandle } from '../native/binding.js';
import { decodeRuleset, RulesetDecoder, SetElementsDump } from './netlink/decode.js';
import { NFPROTO } from './netlink/constants.js';
import { withErrnoCodes, type KernelRefusal } from './errors.js';
import { notATransaction } from './input-shape.js';
import { commitFailure, commitResult, operationRefusal } from './refusal.js';
import type { EncodedRequest } from './netlink/encode.js';
import type { NftSet, Ruleset, SetElement } from './objects.js';
import { NativeRequestSink } from './native-sink.js';
import { Transaction, type TransactionOptions } from './transaction.js';
import { codeOf } from './validate.js';
import type { MonitorOptions } from './monitor/events.js';
import { openKernelMonitor } from './monitor/kernel-monitor.js';
import type { NftMonitor } from './monitor/nft-monitor.js';
import { checkDumpOptions, type CommitOptions, type CommitResult, type DumpOptions, type MonitoringConnection } from './connection.js';

export type { CommitOptions, CommitResult, DumpOptions } from './connection.js';

export interface OpenOptions {
  /** A namespace name (`ip netns add NAME`), a path (/proc/PID/ns/net), or an open fd. Default: the caller's. */
  netns?: string | number;
}

const DUMP_TABLES = 1;
const DUMP_CHAINS = 2;
const DUMP_SETS = 4;
const DUMP_ELEMENTS = 8;
const DUMP_RULES = 16;
const DUMP_OBJECTS = 32;
const DUMP_FLOWTABLES = 64;
/** With DUMP_ELEMENTS: not those of anonymous sets that carry an elements digest. */
const DUMP_OMIT_DIGESTED_ELEMENTS = 128;
const DUMP_RULES_PER_CHAIN = 256;
/** With DUMP_RULES: not the expressions of rules that carry an expressions digest. */
const DUMP_OMIT_DIGESTED_RULE_EXPRS = 512;
/** With DUMP_SETS and DUMP_ELEMENTS: each named, non-interval set's element hashes (a kind-8 op). */
const DUMP_ELEMENT_HASHES = 1024;

export class Nftables implements MonitoringConnection {
  private constructor(
    private readonly native: NativeBinding,
    private readonly handle: NativeHandle,
    private readonly netns: string | number | undefined,
  ) {}

  static open(opts: OpenOptions = {}): Nftables {
    // Errors from the kernel carry their errno as `code` ('EPERM' without CAP_NET_ADMIN).
    const native = withErrnoCodes(loadNative());
    const handle = opts.netns === undefined ? native.open() : native.open(opts.netns);
    return new Nftables(native, handle, opts.netns);
  }

  /**
   * The netlink port id of this connection's socket: a monitor reports it as the committer of this
   * connection's transactions (MonitorTransaction.portid; `self` compares it for you).
   */
  get portid(): number {
    return this.native.portid(this.handle);
  }

  /**
   * Watches the namespace's ruleset: every committed transaction (by anyone) as one event, with its
   * changes decoded, filtered by family, table and kind. Stop with `break` (or close()).
   * See docs/library.md, "Monitor".
   */
  monitor(opts: MonitorOptions = {}): NftMonitor {
    return openKernelMonitor({ native: this.native, netns: this.netns, portid: this.portid, dump: (o) => this.dump(o) }, opts);
  }

  /**
   * A transaction bound to this connection: while it is built, each part it finishes goes to the
   * addon, which turns it into netlink messages on a pool thread meanwhile, so that commit() is
   * left with the last part to convert. That pays where a core is free while JavaScript encodes,
   * and little where V8's compiler threads want that core (docs/decisions.md). Nothing reaches the
   * kernel before commit(), which still sends one atomic batch.
   * Otherwise it is a Transaction like any other: check(), render(), or a commit on another
   * connection (which sends the whole request, as for an unbound one).
   */
  transaction(opts: TransactionOptions = {}): Transaction {
    return new Transaction(opts).streamTo(new NativeRequestSink(this.native, this.handle, this));
  }

  /**
   * Applies the transaction atomically; throws NftCommitError (nothing applied) if the kernel refuses.
   * Resolves with the handles of the rules queued with `{ echo: true }`.
   */
  async commit(tx: Transaction, opts: CommitOptions = {}): Promise<CommitResult> {
    if (!(tx instanceof Transaction)) throw notATransaction('commit', tx);
    // A transaction from this.transaction() has fed its parts already; after this commit it is
    // unbound (committed again, it sends its whole request).
    const sink = tx.endStream();
    const streamed = sink instanceof NativeRequestSink && sink.owner === this ? sink : undefined;
    if (sink !== streamed) sink?.cancel();
    const req = tx.encode(opts.generation !== undefined ? { generation: opts.generation } : {});
    const handles = await this.send(tx, req, opts.generation, streamed);
    return ruleHandlesOf(tx, req, handles);
  }

  /** Lets the kernel validate the transaction without applying it (a bound one stays bound). */
  async check(tx: Transaction): Promise<void> {
    if (!(tx instanceof Transaction)) throw notATransaction('check', tx);
    await this.send(tx, tx.encode({ check: true }), undefined, undefined);
  }

  /**
   * Sends the request, or ends the stream that holds it. Resolves with the handles the kernel
   * echoed (none in check mode: nothing is committed).
   */
  private async send(tx: Transaction, req: EncodedRequest, generation: number | undefined, streamed: NativeRequestSink | undefined): Promise<NativeRuleHandle[]> {
    if (req.origins.length === 0) {
      streamed?.cancel();
      return [];
    }
    const result = streamed ? await streamed.end(generation) : await this.native.commit(this.handle, req.buffer);
    if (result.errors.length === 0) return result.handles;
    throw commitFailure(result.errors.map((e) => refusalOf(tx, req, e)), generation);
  }

  /** Reads tables, chains, sets (with elements) and rules, all from one generation. */
  async dump(opts: DumpOptions = {}): Promise<Ruleset> {
    const family = opts.family ? codeOf(NFPROTO, opts.family, 'dump family') : NFPROTO.unspec;
    const table = opts.table ?? null;
    checkDumpOptions(opts);
    const ruleExprsOmitted = opts.ruleExprs === false;
    const noChains = opts.chains === false;
    const decodeOpts = { elementKeys: opts.elementKeys === true, ruleExprsOmitted, anonymousSetsListed: noChains, ...(opts.hashElements ? { hashElements: opts.hashElements } : {}) };
    const ruleFlags = (opts.perChainRules ? DUMP_RULES_PER_CHAIN : 0) | (ruleExprsOmitted ? DUMP_OMIT_DIGESTED_RULE_EXPRS : 0);
    const chainsAndRules = noChains ? 0 : DUMP_CHAINS | DUMP_RULES | ruleFlags;
    if (opts.chain !== undefined || opts.elements === false) {
      const what = opts.chain !== undefined ? DUMP_RULES | (ruleFlags & DUMP_OMIT_DIGESTED_RULE_EXPRS) : DUMP_TABLES | DUMP_SETS | DUMP_OBJECTS | DUMP_FLOWTABLES | chainsAndRules;
      return decodeRuleset(await this.native.dump(this.handle, what, family, table, opts.chain ?? null), decodeOpts);
    }
    // Two dumps, the rules and the sets with their elements: the rules are decoded while the
    // kernel and the addon's worker produce the elements (each half takes about as long;
    // docs/decisions.md). Both are asked for at once: the handle runs them in that order, and the
    // second does not wait for this thread to take the first (a caller busy meanwhile, as a
    // restart building its state is, would hold it back). Each dump is of one generation; when the
    // two differ, the table changed in between and both are read again.
    for (let attempt = 0; ; attempt++) {
      const structure = this.native.dump(this.handle, DUMP_TABLES | DUMP_OBJECTS | DUMP_FLOWTABLES | chainsAndRules, family, table, null);
      const omit = opts.anonymousElements === false ? DUMP_OMIT_DIGESTED_ELEMENTS : 0;
      const hashes = opts.hashElements ? DUMP_ELEMENT_HASHES : 0;
      const sets = this.native.dump(this.handle, DUMP_SETS | DUMP_ELEMENTS | omit | hashes, family, table, null, opts.omitElementsOf?.length ? opts.omitElementsOf : null);
      // Not an unhandled rejection while the first half is decoded: awaited below.
      sets.catch(() => {});
      const d = new RulesetDecoder({ ...decodeOpts, nativeElementHashes: hashes !== 0 });
      const generation = d.add(await structure);
      if (d.add(await sets) === generation) return d.finish();
      if (attempt >= 20) throw new Error(`nftlink: the ruleset kept changing during the dump (${attempt + 1} attempts)`);
    }
  }

  /** One set's elements, decoded with the set's types. */
  async dumpSetElements(set: NftSet): Promise<{ generation: number; elements: SetElement[] }> {
    // Streamed: each part is decoded while the kernel produces the next; a higher attempt starts over.
    let attempt = 0;
    let decoded = new SetElementsDump(set);
    const done = await this.native.dumpSetElementsStream(this.handle, codeOf(NFPROTO, set.family, 'set family'), set.table, set.name, (part, a) => {
      if (a !== attempt) (attempt = a), (decoded = new SetElementsDump(set));
      decoded.add(part);
    });
    // An interval set's ranges are paired once every part is in (a range can straddle two).
    return { generation: done.generation, elements: done.attempt === attempt ? decoded.finish() : [] };
  }

  async generation(): Promise<number> {
    return this.native.getGeneration(this.handle);
  }

  close(): void {
    this.native.close(this.handle);
  }
}

/** Wire operations (a rule with inline sets is several) back to the caller's operation indices. */
function ruleHandlesOf(tx: Transaction, req: EncodedRequest, handles: readonly NativeRuleHandle[]): CommitResult {
  const ruleHandles = new Map<number, number>();
  for (const h of handles) {
    const op = req.origins.op(h.op);
    if (op !== undefined) ruleHandles.set(op, h.handle);
  }
  return commitResult(tx, ruleHandles);
}

function refusalOf(tx: Transaction, req: EncodedRequest, e: NativeError): KernelRefusal {
  const op = e.phase === 'batch' || e.op < 0 ? undefined : req.origins.op(e.op);
  if (op === undefined) return { errno: e.errno, kernelMessage: e.message, operationIndex: -1 };
  return operationRefusal(tx, {
    errno: e.errno,
    kernelMessage: e.message,
    operationIndex: op,
    messageKind: req.origins.kind(e.op),
    attrPath: e.attrPath,
    elementIndex: e.element >= 0 ? req.origins.callerElement(e.op, e.element) : undefined,
    inlineExpr: req.origins.inlineExpr(e.op),
  });
}
