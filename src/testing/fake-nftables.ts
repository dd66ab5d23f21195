// FakeNftables: the NftConnection of tests, an in-memory ruleset with the kernel's semantics.

import {
  renderRuleset,
  Transaction,
  type CommitOptions,
  type CommitResult,
  type DumpOptions,
  type KernelRefusal,
  type MonitoringConnection,
  type MonitorOptions,
  type NftMonitor,
  type NftSet,
  type Operation,
  type Ruleset,
  type SetElement,
  type TransactionOptions,
  withErrnoCode,
} from '../nft/index.js';
import { ERRNO } from '../nft/netlink/constants.js';
import { checkDumpOptions } from '../nft/connection.js';
import { notATransaction } from '../nft/input-shape.js';
import { commitFailure, commitResult, operationRefusal } from '../nft/refusal.js';
import { applyOperation } from './apply.js';
import { dumpRuleset } from './dump.js';
import { FakeMonitors } from './fake-monitor.js';
import { injectedFault, type Fault } from './faults.js';
import { RulesetState } from './ruleset-state.js';
import { rulesetChanges } from './ruleset-diff.js';

/** Port ids the fakes report as their own (a kernel's are process ids and negative numbers). */
let nextPortid = 1;

export type ErrnoName = keyof typeof ERRNO;

export interface FakeOptions {
  /** The generation the fake starts at (default 1). */
  generation?: number;
}

/** What `refuse` matches and answers. */
interface InjectedRefusal {
  match: (op: Operation, index: number) => boolean;
  errno: number;
  elementIndex: number | undefined;
}

/**
 * An in-memory nf_tables for tests: a connection (NftConnection) that commits, checks and dumps as
 * the kernel does, without root or a network namespace, in the style of knftables' Fake. Each
 * behaviour below is compared with the kernel's (Linux 6.18) in test/testing/fake.kernel.test.ts.
 *
 * Modelled:
 * - transactions applied atomically: a refused one changes nothing, and every refusal of the batch
 *   is reported (the kernel goes on through a refused batch to report them all);
 * - the generation: one step per committed transaction that changes something (a batch of no-ops,
 *   such as a destroy of what does not exist, leaves it; an add of an existing chain or set is an
 *   update and moves it); NftGenerationError for a stale `generation`;
 * - add of an existing table, chain or set is no error, unless it differs where the kernel checks
 *   (a set's key, data or flags: EEXIST; a base chain's type: EEXIST, its hook or priority:
 *   EOPNOTSUPP; a regular chain added as a base chain: EEXIST); a base chain's policy changes;
 * - create of an existing object: EEXIST; delete of a missing one: ENOENT; destroy: nothing;
 * - flush of a table or chain deletes its rules (a table's sets keep their elements), of a set its
 *   elements; delete of a table takes everything in it;
 * - delete of a chain a rule or a verdict map element jumps to, or of a set a rule uses: EBUSY (a
 *   chain's own rules go with it);
 * - ENOENT for a missing table, chain, set, rule handle or position, and for a jump to a missing
 *   chain (to a base chain: EOPNOTSUPP);
 * - elements: add of a key that is there is nothing with the same data, EEXIST with other data;
 *   create of one EEXIST; a range that overlaps one of an interval set EEXIST; ENFILE past the
 *   set's `size`; delete of a missing one ENOENT; EINVAL for one that does not fit the set's types;
 *   a message of none EINVAL to add and a flush of the set to delete, as the kernel takes one (a
 *   Transaction queues none); elements given with a set that exists already ENOENT (they name
 *   the set by the id of a set the batch creates);
 * - handles: one counter per table for its chains, sets and rules, as the kernel allocates them
 *   (also those a refused batch took), echoed for rules queued with `{ echo: true }`;
 * - a rule's inline sets, bound to it and dumped inside its lookups;
 * - refusals explained as the kernel's are: NftCommitError with the same reasons and objects.
 * Dumps decode values as a kernel dump does; `render()` is the ruleset as `nft -f` text.
 *
 * Not modelled: packets (counters, dynamic sets filled from the packet path, timeouts expiring);
 * interval sets beyond their ranges as given and their overlaps (no merging; a range counts once
 * towards `size`, where the kernel may count its two ends); jump loops and depth (ELOOP, EMLINK); the table flags `owner` and `dormant`
 * beyond keeping them; type checks of expressions (a lookup's key length against its set's).
 */
export class FakeNftables implements MonitoringConnection {
  private state = new RulesetState();
  private readonly monitors = new FakeMonitors(nextPortid++);
  private gen: number;
  private anonymousSets = 0;
  private readonly injected: InjectedRefusal[] = [];
  private closed = false;

  constructor(opts: FakeOptions = {}) {
    this.gen = opts.generation ?? 1;
  }

  transaction(opts: TransactionOptions = {}): Transaction {
    return new Transaction(opts);
  }

  async commit(tx: Transaction, opts: CommitOptions = {}): Promise<CommitResult> {
    if (!(tx instanceof Transaction)) throw notATransaction('commit', tx);
    this.open();
    // A transaction of the kernel's connection may have sent parts to the addon: not needed here.
    tx.endStream()?.cancel();
    // Nothing to send: nothing reaches the kernel, whose generation is then not compared either.
    if (tx.size === 0) return commitResult(tx, new Map());
    if (opts.generation !== undefined && opts.generation !== this.gen) {
      throw commitFailure([{ errno: ERRNO.ERESTART, kernelMessage: '', operationIndex: -1 }], opts.generation);
    }
    const ruleHandles = new Map<number, number>();
    const applied = this.apply(tx, true, ruleHandles);
    // A batch that changes nothing leaves the kernel's generation where it was.
    if (applied.changes > 0) {
      const before = this.state;
      this.state = applied;
      this.gen++;
      this.publish(before);
    }
    return commitResult(tx, ruleHandles);
  }

  async check(tx: Transaction): Promise<void> {
    if (!(tx instanceof Transaction)) throw notATransaction('check', tx);
    this.open();
    this.apply(tx, false, new Map());
  }

  async dump(opts: DumpOptions = {}): Promise<Ruleset> {
    this.open();
    checkDumpOptions(opts);
    return dumpRuleset(this.state, this.gen, opts);
  }

  async dumpSetElements(set: NftSet): Promise<{ generation: number; elements: readonly SetElement[] }> {
    const dumped = (await this.dump({ family: set.family, table: set.table })).sets.find((s) => s.name === set.name);
    // The addon's words for the kernel's answer (native/).
    if (!dumped) throw withErrnoCode(new Error('nftlink: the kernel refused the set element dump: No such file or directory (errno 2)'));
    return { generation: this.gen, elements: dumped.elements ?? [] };
  }

  async generation(): Promise<number> {
    this.open();
    return this.gen;
  }

  close(): void {
    this.closed = true;
  }

  /** The port id the fake's monitors give its commits (every one of them is `self`). */
  get portid(): number {
    return this.monitors.portid;
  }

  /**
   * The fake's own commits, as the kernel's monitor reports them (see fake-monitor.ts and
   * ruleset-diff.ts for what differs: the order of a transaction's changes, rules always `add`).
   */
  monitor(opts: MonitorOptions = {}): NftMonitor {
    this.open();
    return this.monitors.open(opts);
  }

  private publish(before: RulesetState): void {
    if (!this.monitors.active) return;
    this.monitors.publish(this.gen, rulesetChanges(dumpRuleset(before, this.gen - 1), dumpRuleset(this.state, this.gen)));
  }

  /** The ruleset as `nft -f` text, as `nft list ruleset` shows it (renderRuleset of a dump). */
  render(): string {
    return renderRuleset(dumpRuleset(this.state, this.gen));
  }

  /**
   * Makes the next committed operation that `match` accepts fail with `errno` (a number or a name
   * such as 'ENOSPC'), reported as the kernel reports that errno for that operation; for an element
   * operation, at element `elementIndex`. Each call refuses one operation; several wait in order.
   */
  refuse(match: (op: Operation, index: number) => boolean, errno: number | ErrnoName, opts: { elementIndex?: number } = {}): this {
    this.injected.push({ match, errno: typeof errno === 'number' ? errno : ERRNO[errno], elementIndex: opts.elementIndex });
    return this;
  }

  /**
   * Applies every operation of `tx` to a copy of the ruleset, returning the copy, or throws the
   * refusals of the whole batch. `commit`: a refusal asked for with `refuse` is used up (also when
   * another operation refuses the batch), and echoed rules' handles go to `ruleHandles`.
   */
  private apply(tx: Transaction, commit: boolean, ruleHandles: Map<number, number>): RulesetState {
    const work = this.state.copy();
    const refusals: KernelRefusal[] = [];
    for (let i = 0; i < tx.size; i++) {
      const op = tx.operation(i);
      const injected = this.injectedFor(op, i, commit);
      const faults: Fault[] = injected ?? applyOperation(work, op, () => `__set${this.anonymousSets++}`);
      for (const f of faults) refusals.push(operationRefusal(tx, { ...f, kernelMessage: '', operationIndex: i }));
      if (faults.length === 0 && op.kind === 'rule' && op.echo) ruleHandles.set(i, echoedHandle(work, op));
    }
    if (refusals.length > 0) {
      if (commit) work.keepHandlesUsedIn(this.state);
      throw commitFailure(refusals, undefined);
    }
    return work;
  }

  private injectedFor(op: Operation, index: number, useUp: boolean): Fault[] | undefined {
    const at = this.injected.findIndex((r) => r.match(op, index));
    if (at < 0) return undefined;
    const r = this.injected[at]!;
    if (useUp) this.injected.splice(at, 1);
    return [injectedFault(op, r.errno, r.elementIndex)];
  }

  private open(): void {
    if (this.closed) throw new Error('nftlink: the connection is closed');
  }
}

/** The handle an added, inserted or replaced rule has (a replaced rule keeps its own). */
function echoedHandle(state: RulesetState, op: Extract<Operation, { kind: 'rule' }>): number {
  if (op.verb === 'replace') return op.rule.handle!;
  return state.table(op.rule.family, op.rule.table)!.lastHandle;
}
