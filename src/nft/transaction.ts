// A transaction: operations queued with nft's verbs, validated and encoded as they are queued, then
// committed atomically as one netlink batch (the kernel applies all or nothing).

import { NftValidationError } from './errors.js';
import type { Flowtable, NftObject, NftObjectRef } from './named-objects.js';
import { decodeRequestElements, decodeRequestOperation } from './netlink/decode.js';
import { RequestEncoder, streamsElements, type ElementRun, type EncodedRequest, type EncodeOptions, type ElementInspector, type RequestSink } from './netlink/encode.js';
import type { Chain, NftSet, Rule, SetElement, SetRef, Table } from './objects.js';
import { describeTarget, type Operation, type OperationOptions, type Verb } from './operations.js';
import { renderCommands, renderOperation } from './render/commands.js';
import { checkRuleWritable } from './rule-digest.js';
import { checkComment, checkName, checkTag, checkTypeof, jumpTargets } from './validate.js';
import { checkElement, checkTransactionObject, operationOf } from './input-shape.js';

export type TransactionObject =
  | { table: Table }
  | { chain: Chain }
  | { rule: Rule }
  | { set: NftSet; elements?: undefined }
  | { set: NftSet | SetRef; elements: Iterable<SetElement> }
  /** A named stateful object; delete and destroy need only its type and name (NftObjectRef). */
  | { object: NftObject | NftObjectRef }
  | { flowtable: Flowtable };

export interface TransactionOptions {
  /**
   * What the kernel already holds (a dump): element operations find set types in it, and jumps are
   * checked against its chains and the chains this transaction adds.
   */
  known?: { readonly chains: readonly Chain[]; readonly sets: readonly NftSet[] };
  /**
   * Sets (declarations) the kernel holds that operations may refer to, without the strict checks
   * `known` turns on: element operations find their types, and render() knows what a lookup loads.
   * Or a function that gives them, called the first time a set is looked up: a transaction that only
   * queues elements of sets it is given whole never calls it.
   */
  sets?: Iterable<NftSet> | (() => Iterable<NftSet>);
  /** Prefix of the names given to anonymous sets (default: random per process); see netlink/encode/request-encoder.ts. */
  anonymousSetPrefix?: string;
  /**
   * How many bytes the encoded request is expected to reach (one of a run of big transactions: the
   * size of the one before). Its buffer starts that big instead of growing by doubling, which in
   * kube-proxy's layout at 10k services copied and zeroed 60+ MB per cold start.
   */
  expectedBytes?: number;
}

const key = (family: string, table: string, name: string): string => `${family} ${table} ${name}`;

/** The largest buffer a transaction is told to start with (a netlink batch is far smaller). */
const MAX_EXPECTED_BYTES = 1 << 30;

/**
 * An operation as queued. `stream` is set for elements given as a non-array iterable of a plain
 * set: they are encoded as they are read and not kept (see RequestEncoder.addElementStream).
 */
interface QueuedOperation {
  op: Operation;
  stream?: { source: Iterable<SetElement>; inspect: ElementInspector };
}

/**
 * An element operation whose elements were encoded from a stream and not kept: the operation is
 * made, its elements decoded from the request, when it is first shown (render(), error messages).
 */
class StreamedElements {
  private materialized: Operation | undefined;

  constructor(
    private readonly verb: Extract<Operation, { kind: 'element' }>['verb'],
    private readonly set: NftSet,
    private readonly runs: readonly ElementRun[],
  ) {}

  operation(request: Uint8Array): Operation {
    if (this.materialized === undefined) {
      const elements: SetElement[] = [];
      for (const { at, count } of this.runs) decodeRequestElements(this.set, request, at, count, elements);
      this.materialized = { verb: this.verb, kind: 'element', set: this.set, elements };
    }
    return this.materialized;
  }
}

/** In Transaction.messageAt: the operation is not read back from the request (kept, or streamed). */
const NOT_READ_BACK = -1;

/**
 * Whether an operation, encoded as one message, reads back from it as it was queued (see
 * decodeRequestOperation): a regular chain's add or create, and a rule's add, insert or replace,
 * when nothing of the object stays out of the message. Base chains are kept (a few per table),
 * and so are objects with a handle or position the message does not carry (a replace carries the
 * handle, an add or insert the position), and echoed rules.
 */
function readsBack(op: Operation): boolean {
  if (op.kind === 'chain') return (op.verb === 'add' || op.verb === 'create') && op.chain.base === undefined && op.chain.handle === undefined;
  if (op.kind !== 'rule' || op.echo) return false;
  if (op.verb === 'replace') return op.rule.position === undefined;
  return (op.verb === 'add' || op.verb === 'insert') && op.rule.handle === undefined;
}

function namedObjectOperation(verb: Verb, object: NftObject | NftObjectRef): Operation {
  if (verb !== 'add' && verb !== 'create' && verb !== 'delete' && verb !== 'destroy') throw new RangeError(`${verb} does not apply to named objects`);
  checkName('table', object.table);
  checkName(`${object.type} object`, object.name);
  if (verb === 'delete' || verb === 'destroy') return { verb, kind: 'object', object };
  checkComment(`${object.type} ${object.name}`, (object as NftObject).comment);
  return { verb, kind: 'object', object: object as NftObject };
}

function flowtableOperation(verb: Verb, flowtable: Flowtable): Operation {
  if (verb !== 'add' && verb !== 'create' && verb !== 'delete' && verb !== 'destroy') throw new RangeError(`${verb} does not apply to flowtables`);
  checkName('table', flowtable.table);
  checkName('flowtable', flowtable.name);
  return { verb, kind: 'flowtable', flowtable };
}

export class Transaction {
  /**
   * For each queued operation: where its message starts in the request, if the operation is read
   * back from there when shown (most chains and rules, see readsBack); else NOT_READ_BACK, and it is
   * in `kept` or `streamed`. Why: a 10k-service
   * cold start queues 20k of them, and kept, they and the caller's objects they hold survived every
   * young-generation collection of the build, which copied and then marked them (Node 20,
   * docs/decisions.md).
   */
  private readonly messageAt: number[] = [];
  /** The operations not read back, by index: kept as queued. */
  private readonly kept = new Map<number, Operation>();
  /** The element operations encoded from a stream, by index. */
  private readonly streamed = new Map<number, StreamedElements>();
  /** The indices of the rules queued with `echo` (the commit maps the kernel's handles to them). */
  private readonly echoed: number[] = [];
  private readonly encoder: RequestEncoder;
  /** The sets this transaction adds (they win over the given ones of the same name). */
  private readonly addedSets = new Map<string, NftSet>();
  /**
   * The sets given by the options, indexed on first use: a transaction that only queues elements
   * of sets passed whole never looks one up (a partial sync of the proxy makes two transactions
   * given its table's hundreds of sets, and used to index them all for each).
   */
  private givenSets: Map<string, NftSet> | (Iterable<NftSet> | (() => Iterable<NftSet>))[];
  private readonly chains = new Set<string>();
  private readonly strictTables = new Set<string>();
  private readonly strict: boolean;

  constructor(opts: TransactionOptions = {}) {
    const expected = opts.expectedBytes;
    if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0 && expected <= MAX_EXPECTED_BYTES)) {
      throw new TypeError(`nftlink: Transaction: expectedBytes must be an integer from 0 to ${MAX_EXPECTED_BYTES}, not ${String(expected)}`);
    }
    this.encoder = new RequestEncoder(opts.anonymousSetPrefix, expected);
    this.givenSets = [opts.sets ?? [], opts.known?.sets ?? []];
    for (const c of opts.known?.chains ?? []) this.chains.add(key(c.family, c.table, c.name));
    this.strict = opts.known !== undefined;
  }

  get size(): number {
    return this.messageAt.length;
  }

  /**
   * The operations queued, in order: chains and rules read back from the request (new objects
   * equal to what was queued, see queue()), the rest as queued, streamed elements decoded.
   */
  get operations(): readonly Operation[] {
    const out: Operation[] = [];
    for (let i = 0; i < this.messageAt.length; i++) out.push(this.operation(i));
    return out;
  }

  /** One queued operation (see operations). */
  operation(index: number): Operation {
    const at = this.messageAt[index];
    if (at === undefined) throw new RangeError(`no operation ${index} in a transaction of ${this.messageAt.length}`);
    const request = this.encoder.w.bytes;
    if (at !== NOT_READ_BACK) return decodeRequestOperation(request, at);
    return this.kept.get(index) ?? this.streamed.get(index)!.operation(request);
  }

  /** The indices of the rules queued with `echo`, in order. */
  get echoedRules(): readonly number[] {
    return this.echoed;
  }

  /** Encoded bytes so far (to keep cold-start transactions of a bounded size). */
  get encodedSize(): number {
    return this.encoder.size;
  }

  /** `add`: create if missing, no error if it exists (rules: append; elements: add; no elements: nothing queued). */
  add(obj: TransactionObject, opts?: OperationOptions): this {
    return this.queue('add', obj, opts);
  }
  /** `create`: like add, but an existing object is an error (EEXIST). */
  create(obj: TransactionObject): this {
    return this.queue('create', obj);
  }
  /** `insert`: a rule at the head of its chain, or before `rule.position`. */
  insert(obj: { rule: Rule }, opts?: OperationOptions): this {
    return this.queue('insert', obj, opts);
  }
  /** `replace`: the rule with `rule.handle` becomes this one (the kernel keeps the handle). */
  replace(obj: { rule: Rule }, opts?: OperationOptions): this {
    return this.queue('replace', obj, opts);
  }
  /**
   * `delete`: the object must exist (ENOENT otherwise). Rules by handle. Elements: an empty list
   * queues nothing (it never flushes the set: flush() does).
   */
  delete(obj: TransactionObject): this {
    return this.queue('delete', obj);
  }
  /** `destroy`: delete if it exists (Linux 6.3). Elements: an empty list queues nothing, as for delete. */
  destroy(obj: TransactionObject): this {
    return this.queue('destroy', obj);
  }
  /** `flush`: a table's or chain's rules, or a set's elements. */
  flush(obj: { table: Table } | { chain: Chain } | { set: NftSet | SetRef }): this {
    return this.queue('flush', obj as TransactionObject);
  }

  /** A set declared in this transaction, else one given by the options (`known` over `sets`). */
  private setNamed(family: string, table: string, name: string): NftSet | undefined {
    const k = key(family, table, name);
    return this.addedSets.get(k) ?? this.givenIndex().get(k);
  }

  private givenIndex(): Map<string, NftSet> {
    if (this.givenSets instanceof Map) return this.givenSets;
    const index = new Map<string, NftSet>();
    for (const given of this.givenSets) for (const s of typeof given === 'function' ? given() : given) index.set(key(s.family, s.table, s.name), s);
    return (this.givenSets = index);
  }

  /** Every set the transaction knows of, one per name (as setNamed finds them). */
  private knownSets(): NftSet[] {
    const all = new Map(this.givenIndex());
    for (const [k, s] of this.addedSets) all.set(k, s);
    return [...all.values()];
  }

  private resolveSet(ref: NftSet | SetRef, what: string): NftSet {
    if ('key' in ref && ref.key) return ref;
    const known = this.setNamed(ref.family, ref.table, ref.name);
    if (!known) {
      throw new RangeError(`${what}: the types of set ${ref.family} ${ref.table} ${ref.name} are unknown: add the set in this transaction, pass the set object, or create the transaction with { known: dump }`);
    }
    return known;
  }

  private toOperation(verb: Verb, obj: TransactionObject, opts: OperationOptions | undefined): QueuedOperation {
    if ('elements' in obj && obj.elements !== undefined) return this.elementOperation(verb, obj);
    return { op: this.objectOperation(verb, obj as Exclude<TransactionObject, { elements: Iterable<SetElement> }>, opts) };
  }

  private elementOperation(verb: Verb, obj: { set: NftSet | SetRef; elements: Iterable<SetElement> }): QueuedOperation {
    if (verb === 'insert' || verb === 'replace' || verb === 'flush') throw new RangeError(`${verb} does not apply to elements`);
    const set = this.resolveSet(obj.set, `${verb} element`);
    const inspect = this.elementInspector(verb, set);
    if (Array.isArray(obj.elements) || !streamsElements(set)) {
      const elements: SetElement[] = Array.isArray(obj.elements) ? obj.elements : Array.from(obj.elements);
      elements.forEach(inspect);
      return { op: { verb, kind: 'element', set, elements } };
    }
    // Its elements are not kept: operation() decodes them from the request (StreamedElements).
    return { op: { verb, kind: 'element', set, elements: [] }, stream: { source: obj.elements, inspect } };
  }

  /** The checks of one element: its comment, and for verdict maps its jump target. */
  private elementInspector(verb: Verb, set: NftSet): ElementInspector {
    const targets = set.data === 'verdict' && verb !== 'delete' && verb !== 'destroy' && this.checks(set.family, set.table);
    // The set's flags as declared in this transaction or the dump it knows, else as passed: looked
    // up only for an element with a timeout, the one thing they decide.
    let flagged: { name: string; flags: string[] } | undefined;
    const flagsOf = (): { name: string; flags: string[] } =>
      (flagged ??= { name: set.name, flags: [...(set.flags ?? []), ...(this.setNamed(set.family, set.table, set.name)?.flags ?? [])] });
    return (e, i) => {
      checkElement((e as { timeout?: unknown } | null)?.timeout === undefined ? set : flagsOf(), e, i, verb);
      if (e.comment !== undefined) checkComment(`element ${i} of ${set.name}`, e.comment);
      const v = e.value;
      if (targets && v && !Array.isArray(v) && 'chain' in v) this.checkTargets(set.family, set.table, [v.chain], `an element of map ${set.name}`);
    };
  }

  // One function per kind, each small: see RuleBuilder.match on why size matters to V8 here.
  private objectOperation(verb: Verb, obj: Exclude<TransactionObject, { elements: Iterable<SetElement> }>, opts: OperationOptions | undefined): Operation {
    const echo = opts?.echo === true;
    if ('rule' in obj) return this.ruleOperation(verb, obj.rule, echo);
    if (echo) throw new RangeError('echo applies to rules only');
    if ('chain' in obj) return this.chainOperation(verb, obj.chain);
    if ('table' in obj) return this.tableOperation(verb, obj.table);
    if ('object' in obj) return namedObjectOperation(verb, obj.object);
    if ('flowtable' in obj) return flowtableOperation(verb, obj.flowtable);
    return this.setOperation(verb, obj.set as NftSet);
  }

  private tableOperation(verb: Verb, table: Table): Operation {
    if (verb === 'insert' || verb === 'replace') throw new RangeError(`${verb} applies to rules only`);
    checkName('table', table.name);
    checkComment('table', table.comment);
    return { verb, kind: 'table', table };
  }

  private chainOperation(verb: Verb, chain: Chain): Operation {
    if (verb === 'insert' || verb === 'replace') throw new RangeError(`${verb} applies to rules only`);
    checkName('chain', chain.name);
    checkComment('chain', chain.comment);
    return { verb, kind: 'chain', chain };
  }

  private ruleOperation(verb: Verb, r: Rule, echo: boolean): Operation {
    if (verb === 'create' || verb === 'flush') throw new RangeError(`${verb} does not apply to rules`);
    if ((verb === 'replace' || verb === 'delete' || verb === 'destroy') && r.handle === undefined) {
      throw new RangeError(`${verb} rule in ${r.family} ${r.table} ${r.chain} needs the rule's handle`);
    }
    checkComment('rule', r.comment);
    checkTag(r);
    if (verb !== 'delete' && verb !== 'destroy') {
      checkRuleWritable(r);
      this.checkJumps(r);
    }
    return echo ? { verb, kind: 'rule', rule: r, echo } : { verb, kind: 'rule', rule: r };
  }

  private setOperation(verb: Verb, set: NftSet): Operation {
    if (verb === 'insert' || verb === 'replace') throw new RangeError(`${verb} applies to rules only`);
    checkName('set', set.name);
    checkComment('set', set.comment);
    if (verb === 'flush') return { verb, kind: 'set', set: this.resolveSet(set, 'flush set') };
    if ((verb === 'add' || verb === 'create') && (!set.key || set.key.length === 0)) {
      throw new RangeError(`set ${set.name} needs a key type`);
    }
    checkTypeof(set);
    return { verb, kind: 'set', set };
  }

  private checkJumps(r: Rule): void {
    if (!this.checks(r.family, r.table)) return;
    this.checkTargets(r.family, r.table, jumpTargets(r.exprs), `a rule in chain ${r.chain}`);
  }

  /** Whether jumps into this table are checked (against a dump's chains, or a table added here). */
  private checks(family: string, table: string): boolean {
    return this.strict || (this.strictTables.size > 0 && this.strictTables.has(`${family} ${table}`));
  }

  private checkTargets(family: string, table: string, targets: readonly string[], who: string): void {
    if (!this.checks(family, table)) return;
    for (const target of targets) {
      if (!this.chains.has(key(family, table, target))) {
        throw new RangeError(`${who} jumps to chain ${target}, which neither exists in table ${family} ${table} nor is added in this transaction`);
      }
    }
  }

  private queue(verb: Verb, obj: TransactionObject, opts?: OperationOptions): this {
    const index = this.messageAt.length;
    let op: Operation | undefined;
    let at = -1;
    let messages = 0;
    let streamed: StreamedElements | undefined;
    try {
      checkTransactionObject(obj);
      const queued = this.toOperation(verb, obj, opts);
      op = queued.op;
      // No elements, nothing to do: nothing is queued, checked as any element operation is. Sent,
      // an element message without elements is a flush of the whole set to DELSETELEM (and
      // DESTROYSETELEM), and EINVAL to NEWSETELEM (docs/library.md, "Transactions").
      if (op.kind === 'element' && !queued.stream && op.elements.length === 0) return this;
      if (queued.stream) {
        const elementOp = op as Extract<Operation, { kind: 'element' }>;
        const runs = this.encoder.addElementStream(elementOp, index, queued.stream.source, queued.stream.inspect);
        if (runs.length === 0) return this;
        streamed = new StreamedElements(elementOp.verb, elementOp.set, runs);
      } else {
        const before = this.encoder.origins.length;
        at = this.encoder.add(op, index);
        messages = this.encoder.origins.length - before;
      }
    } catch (err) {
      // The operation as the caller gave it, when it failed before it was made.
      const shown = op ?? operationOf(verb, obj);
      const what = shown ? `${verb} ${describeTarget(shown)}` : `${verb} operation ${index}`;
      throw new NftValidationError(`nftlink: ${what}: ${(err as Error).message}`, shown, index);
    }
    if (streamed !== undefined) {
      this.messageAt.push(NOT_READ_BACK);
      this.streamed.set(index, streamed);
    } else if (messages === 1 && readsBack(op)) this.messageAt.push(at);
    else {
      this.messageAt.push(NOT_READ_BACK);
      this.kept.set(index, op);
    }
    if (op.kind === 'rule' && op.echo) this.echoed.push(index);
    this.track(op);
    return this;
  }

  private track(op: Operation): void {
    if (op.kind === 'chain') {
      // Chains matter only to jump checks: without a dump or a table created here there are none
      // (a cold start of the proxy queues 10k chains per part and checks nothing).
      if (this.strict || this.strictTables.size > 0) this.trackChain(op);
    } else if (op.kind === 'set') {
      const k = key(op.set.family, op.set.table, op.set.name);
      if (op.verb === 'add' || op.verb === 'create') this.addedSets.set(k, op.set);
    } else if (op.kind === 'table' && op.verb === 'create') {
      // A table created here is new: every chain a rule jumps to must come from this batch.
      const first = !this.strict && this.strictTables.size === 0;
      this.strictTables.add(`${op.table.family} ${op.table.name}`);
      if (first) {
        for (let i = 0; i < this.messageAt.length; i++) {
          // Streamed element operations are not chains: not decoded for nothing.
          if (this.streamed.has(i)) continue;
          const earlier = this.operation(i);
          if (earlier.kind === 'chain') this.trackChain(earlier);
        }
      }
    }
  }

  private trackChain(op: Extract<Operation, { kind: 'chain' }>): void {
    const k = key(op.chain.family, op.chain.table, op.chain.name);
    if (op.verb === 'add' || op.verb === 'create') this.chains.add(k);
    else if (op.verb === 'delete' || op.verb === 'destroy') this.chains.delete(k);
  }

  /**
   * From now on, hands finished operations to `sink` while the transaction is still being built
   * (what Nftables.transaction() sets up, so that the addon converts them meanwhile).
   */
  streamTo(sink: RequestSink): this {
    this.encoder.streamTo(sink);
    return this;
  }

  /** Feeds the rest and lets go of the sink: it then holds every operation (undefined: none). */
  endStream(): RequestSink | undefined {
    return this.encoder.endStream();
  }

  /** The request buffer for the addon. */
  encode(opts: EncodeOptions = {}): EncodedRequest {
    return this.encoder.finish(opts);
  }

  /** The transaction as `nft -f` text. */
  render(): string {
    return renderCommands(this.operations, { knownSets: this.knownSets() });
  }

  /** One operation as an nft command (used in error messages). */
  renderOperation(index: number, elementIndex?: number): string {
    const op = this.operation(index);
    const shown = op.kind === 'element' && elementIndex !== undefined && op.elements[elementIndex] ? { ...op, elements: [op.elements[elementIndex]] } : op;
    return renderOperation(shown, this.knownSets());
  }
}
