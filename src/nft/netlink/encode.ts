// Operations -> the compact request buffer. Each operation becomes one or more kernel messages
// (a rule with an inline set is NEWSET + NEWSETELEM + NEWRULE, as nft sends it); `origins` maps
// every wire operation back to the caller's operation and element so errors name the right one.

import { encodeExpr, type Expr } from '../expr/index.js';
import { CHAIN_POLICIES, CHAIN_TYPES, SET_FLAGS, SET_POLICIES, type Chain, type NftSet, type Rule, type SetElement, type Table } from '../objects.js';
import type { Operation } from '../operations.js';
import { typeIdOf, type Datatype, type Scalar } from '../types/datatypes.js';
import { typeofUdata, verdictTypeofUdata } from '../types/typeof.js';
import { verdictCode, type Verdict } from '../types/verdict.js';
import { checkDatatypes, checkInteger, checkOneOf, codeOf } from '../validate.js';
import { intervalElements, parseIntervalValue, valuesLength, writeValues } from '../values.js';
import { CHAIN_ATTR, ELEM_ATTR, RULE_ATTR, SET_ATTR, TABLE_ATTR, UDATA } from './attrs.js';
import { NF_INET_HOOK, NFPROTO, NFT_DATA_VERDICT, NFT_MSG, NFT_SET_ELEM_F, NFT_SET_F, NFT_TABLE_F, NLM_F } from './constants.js';
import { commentUdata, UdataBuilder } from './udata.js';
import { dataElement, ElementOutput, verdictElement, type ElementInspector } from './element-writer.js';
import { WireKind, WireWriter, WIRE_FLAG_CHECK, WIRE_FLAG_GENID } from './wire.js';

// The families an object can be in: NFPROTO less unspec, which only a dump asks for.
const { unspec: _unspec, ...OBJECT_FAMILY } = NFPROTO;

export type { ElementInspector } from './element-writer.js';

/**
 * Where each wire message came from: the caller's operation index, and for interval element
 * messages, wire element index -> caller element index (-1: nft's leading interval marker). Kept as
 * plain numbers, not an object per message: a cold-start part holds 20k messages while the next is
 * planned.
 */
export class WireOrigins {
  private ops: number[] = [];
  /** The kind of object each message carries: an operation's messages may differ (a rule's inline sets). */
  private kinds: WireKind[] = [];
  private readonly elementMaps = new Map<number, Int32Array>();
  /** For the messages of a rule's inline set: the index of the rule's expression that holds it. */
  private readonly inlineExprs = new Map<number, number>();
  /** For the later messages of a long element list: the caller's index of their first element. */
  private readonly elementBases = new Map<number, number>();

  get length(): number {
    return this.ops.length;
  }
  push(op: number, kind: WireKind, elements?: Int32Array, inlineExpr?: number): void {
    if (elements) this.elementMaps.set(this.ops.length, elements);
    if (inlineExpr !== undefined) this.inlineExprs.set(this.ops.length, inlineExpr);
    this.ops.push(op);
    this.kinds.push(kind);
  }
  /** The last message pushed holds the caller's elements from `first` on. */
  setElementBase(first: number): void {
    this.elementBases.set(this.ops.length - 1, first);
  }
  /** Forgets the messages from `length` on (an operation that failed to encode). */
  truncate(length: number): void {
    for (let i = length; i < this.ops.length; i++) {
      this.elementMaps.delete(i);
      this.inlineExprs.delete(i);
      this.elementBases.delete(i);
    }
    this.ops.length = length;
    this.kinds.length = length;
  }
  /** The caller's operation of wire message i. */
  op(i: number): number | undefined {
    return this.ops[i];
  }
  kind(i: number): WireKind | undefined {
    return this.kinds[i];
  }
  inlineExpr(i: number): number | undefined {
    return this.inlineExprs.get(i);
  }
  /** The caller's index of element `element` of wire message i. */
  callerElement(i: number, element: number): number {
    const map = this.elementMaps.get(i);
    if (map) return map[element] ?? -1;
    return (this.elementBases.get(i) ?? 0) + element;
  }
  copy(): WireOrigins {
    const c = new WireOrigins();
    c.ops = this.ops.slice();
    c.kinds = this.kinds.slice();
    for (const [k, v] of this.elementMaps) c.elementMaps.set(k, v);
    for (const [k, v] of this.inlineExprs) c.inlineExprs.set(k, v);
    for (const [k, v] of this.elementBases) c.elementBases.set(k, v);
    return c;
  }
}

export interface EncodedRequest {
  buffer: Uint8Array;
  origins: WireOrigins;
}

export interface EncodeOptions {
  check?: boolean;
  /** Compare-and-swap: the kernel refuses the batch unless the ruleset is still at this generation. */
  generation?: number;
}

/** Where an element operation's elements sit in the request buffer (after their u32 count). */
export interface ElementRun {
  at: number;
  count: number;
}

/**
 * Where a transaction bound to a connection hands its finished operations while it is still being
 * built (Nftables.transaction()): the addon turns them into netlink messages meanwhile, and the
 * commit sends the batch they make.
 */
export interface RequestSink {
  /**
   * `operations` whole operations, without the header, going on where the previous part ended.
   * The encoder never writes those bytes again while the sink is attached (the addon reads them
   * in place), nor after it let go of the sink unless it first moved to a fresh buffer.
   */
  feed(part: Uint8Array, operations: number): void;
  /** What was fed is of no use any more (an operation already fed was rolled back). */
  cancel(): void;
}

/** Finished operations are fed once this many bytes of them wait: ~30 parts for 100k elements. */
const FEED_BYTES = 128 * 1024;

/**
 * While a sink is attached, a plain element list is cut into operations of about this many bytes,
 * so that a long one can be fed before it ends. Below the 64 KiB that one kernel element message
 * holds, so each becomes one message of the batch, as the addon's own cut would have made it. A
 * refusal still names the caller's element (WireOrigins.callerElement). Without a sink a list
 * stays one operation: the cuts cost a cold 100k-element build 2-3 ms of interpreted code and
 * more of TurboFan's (paired cold builds, 1.06x wall, 1.12x user), for nothing to feed.
 */
const ELEMENT_OP_BYTES = 32 * 1024;
/** A cut position never reached (a small integer for V8, unlike Infinity). */
const NO_CUT = 0x3fffffff;

/** A plain element list being written, one operation per ELEMENT_OP_BYTES (nextElementOp). */
interface ElementList {
  /** Where the current operation's element count sits. */
  countAt: number;
  /** The caller's index of the current operation's first element. */
  first: number;
  /** The operations written before it. */
  runs: ElementRun[];
  /** What the next operation's header names (elementHeader). */
  verb: Operation['verb'];
  set: NftSet;
  setId: number | undefined;
}

/** EXPR_CONCAT in nft's enum expr_types: what nft 1.0.6 writes as the typeof of a `type a . b` key. */
const NFT_EXPR_CONCAT = 13;

/**
 * Names for anonymous sets: a prefix unique to the writer, then a counter, instead of nft's
 * `__set%d`. Why: for a `%d` name the kernel walks every set in the table parsing each name to
 * find a free number (nf_tables_set_alloc_name); with 10,000 anonymous sets in kube-proxy's layout
 * that walk is quadratic. An explicit name costs one lookup, and a short one is cheaper still:
 * every lookup by name pays a strlen of each set's name (nla_strcmp). At 10k services x 5 the
 * load went from 9.6 s to 7.9 s (Linux 6.18). nft lists anonymous sets inline, names unseen.
 * The default prefix is random; a writer that can do better passes its own (the proxy uses the
 * ruleset generation it started from, which no earlier writer of the table can have used).
 */
const DEFAULT_ANON_PREFIX = `${Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, '0')}_`;
let anonCount = 0;

export class RequestEncoder {
  // Small at first, so that the buffer grows within the first operations: V8 then has seen the
  // writer's growth path before it optimises the functions that inline it. Starting at 64 KiB, the
  // first growth came after they were compiled, and each (attrStr, encodedItem) was deoptimised
  // and compiled again (Node 20). Doubling makes the extra growths cost nothing that matters.
  readonly w = new WireWriter(4096);
  readonly origins = new WireOrigins();
  private nextSetId = 1;
  private opIndex = 0;
  /** While a rule's inline set is encoded: the index of the expression that holds it. */
  private inlineExpr: number | undefined;

  private readonly countAt: number;
  /** Where finished operations go as they are encoded (streamTo), and how far they went. */
  private sink: RequestSink | undefined;
  private fedAt: number;
  private fedOps = 0;

  constructor(private readonly anonymousPrefix = DEFAULT_ANON_PREFIX) {
    this.countAt = this.w.header(0, 0);
    this.fedAt = this.w.length;
  }

  /** From now on, finished operations go to `sink` in parts (see RequestSink). */
  streamTo(sink: RequestSink): void {
    this.dropSink();
    this.sink = sink;
    this.offer(this.w.length, this.origins.length);
  }

  /**
   * Feeds what is left and lets go of the sink: the request is complete. Returns the sink, which
   * then holds every operation; or undefined (the whole request is to be sent as it is) when there
   * is none, it was dropped, or nothing had reached it yet: a small transaction is not worth a
   * stream (its last part would be all of it).
   */
  endStream(): RequestSink | undefined {
    if (this.sink !== undefined && this.fedOps === 0) this.dropSink();
    this.offer(this.w.length, this.origins.length, 1);
    // Undefined if that last feed failed (offer dropped it).
    const sink = this.sink;
    this.sink = undefined;
    return sink;
  }

  /** Feeds the finished operations up to byte `upTo` (`ops` in all) once `min` bytes of them wait. */
  private offer(upTo: number, ops: number, min = FEED_BYTES): void {
    const sink = this.sink;
    if (sink === undefined || upTo - this.fedAt < min) return;
    try {
      sink.feed(this.w.bytes.subarray(this.fedAt, upTo), ops - this.fedOps);
    } catch {
      // The commit then sends the whole request itself; feeding is only a head start.
      this.dropSink();
      return;
    }
    this.fedAt = upTo;
    this.fedOps = ops;
  }

  private dropSink(): void {
    const sink = this.sink;
    this.sink = undefined;
    // The addon reads fed parts in place, maybe still now: what comes next (a rollback over them)
    // is written elsewhere.
    if (sink && this.fedOps > 0) this.w.moveToCopy();
    this.fedAt = this.w.length;
    this.fedOps = this.origins.length;
    sink?.cancel();
  }

  private begin(msgType: number, kind: WireKind, nlFlags: number, family: string, elements?: Int32Array): void {
    this.w.op(msgType, kind, nlFlags, codeOf(OBJECT_FAMILY, family, 'family'));
    this.origins.push(this.opIndex, kind, elements, this.inlineExpr);
  }

  /**
   * Encodes one operation; if it throws, nothing of it stays in the buffer. Returns where its
   * messages start in the buffer.
   */
  add(op: Operation, index: number): number {
    // atomically() without its closure: this runs for every operation (20k on a 10k-service cold
    // start), and the closure was an allocation and an extra call for each while unoptimised.
    const mark = this.w.mark();
    const origins = this.origins.length;
    const nextSetId = this.nextSetId;
    try {
      this.operation(op, index);
    } catch (err) {
      this.rollback(mark, origins, nextSetId);
      throw err;
    }
    this.offer(this.w.length, this.origins.length);
    return mark;
  }

  /**
   * Encodes an element operation of a plain (non-interval) set whose elements come from an
   * iterable, each element written as it is produced and none kept: a caller's generator of
   * 100,000 elements leaves 100,000 short-lived objects to the young generation instead of
   * 100,000 that survive until the commit (which the collector copied twice: 85 ms of a 100k
   * load here). `inspect` sees each element that carries more than a key and a value (a comment,
   * a timeout, a jump) before it is written. Returns where the elements sit in the buffer, so the
   * transaction can decode them back when it must show them (decodeRequestElements).
   */
  addElementStream(op: Extract<Operation, { kind: 'element' }>, index: number, source: Iterable<SetElement>, inspect: ElementInspector): ElementRun[] {
    const runs = this.atomically(() => {
      this.opIndex = index;
      return this.elementMessage(op.verb, op.set, undefined, undefined, (isNew, what) => this.plainElements(op.verb, op.set, undefined, source, isNew, what, inspect));
    });
    this.offer(this.w.length, this.origins.length);
    return runs;
  }

  private atomically<T>(encode: () => T): T {
    const mark = this.w.mark();
    const origins = this.origins.length;
    const nextSetId = this.nextSetId;
    try {
      return encode();
    } catch (err) {
      this.rollback(mark, origins, nextSetId);
      throw err;
    }
  }

  /** Forgets everything written since `mark` (an operation that failed to encode half way). */
  private rollback(mark: number, origins: number, nextSetId: number): void {
    // Parts of it were fed (a long element list): the sink's batch cannot be used.
    if (mark < this.fedAt) this.dropSink();
    this.w.reset(mark);
    this.origins.truncate(origins);
    this.nextSetId = nextSetId;
  }

  private operation(op: Operation, index: number): void {
    this.opIndex = index;
    switch (op.kind) {
      case 'table':
        return this.table(op.verb, op.table);
      case 'chain':
        return this.chain(op.verb, op.chain);
      case 'rule':
        return this.rule(op.verb, op.rule, op.echo === true);
      case 'set':
        this.set(op.verb, op.set);
        return;
      case 'element':
        return this.elements(op.verb, op.set, op.elements);
    }
  }

  private table(verb: Operation['verb'], t: Table): void {
    if (verb === 'flush') return this.flushRules(t.family, t.name, undefined);
    const msg = verb === 'delete' ? NFT_MSG.DELTABLE : verb === 'destroy' ? NFT_MSG.DESTROYTABLE : NFT_MSG.NEWTABLE;
    this.begin(msg, WireKind.Table, createFlags(verb), t.family);
    const w = this.w;
    w.openList();
    w.attrStr(TABLE_ATTR.NAME, t.name);
    if (msg === NFT_MSG.NEWTABLE) {
      // nft always sends the flags, so that `add table` clears a dormant flag left by someone else.
      w.attrU32(TABLE_ATTR.FLAGS, (t.flags ?? []).reduce((acc, f) => acc | codeOf(NFT_TABLE_F, f, 'table flag'), 0));
      const ud = commentUdata(t.comment);
      if (ud) w.attrBytes(TABLE_ATTR.USERDATA, ud);
    } else if (t.handle !== undefined) w.attrU64(TABLE_ATTR.HANDLE, BigInt(t.handle));
    w.closeList();
    this.noExprs();
  }

  private chain(verb: Operation['verb'], c: Chain): void {
    if (verb === 'flush') return this.flushRules(c.family, c.table, c.name);
    const msg = verb === 'delete' ? NFT_MSG.DELCHAIN : verb === 'destroy' ? NFT_MSG.DESTROYCHAIN : NFT_MSG.NEWCHAIN;
    this.begin(msg, WireKind.Chain, createFlags(verb), c.family);
    const w = this.w;
    w.openList();
    w.attrStr(CHAIN_ATTR.TABLE, c.table);
    w.attrStr(CHAIN_ATTR.NAME, c.name);
    if (msg === NFT_MSG.NEWCHAIN) {
      if (c.base) {
        const { type, hook, priority, policy } = c.base;
        checkOneOf(type, CHAIN_TYPES, 'chain type');
        checkInteger(priority, -(2 ** 31), 2 ** 31 - 1, 'chain priority');
        w.attrStr(CHAIN_ATTR.TYPE, type);
        w.attrU32(CHAIN_ATTR.HOOKNUM, codeOf(NF_INET_HOOK, hook, 'chain hook'));
        w.attrS32(CHAIN_ATTR.PRIO, priority);
        if (policy !== undefined) {
          // Checked first: anything but 'accept' would otherwise go out as 0, a dropping chain.
          checkOneOf(policy, CHAIN_POLICIES, 'chain policy');
          w.attrU32(CHAIN_ATTR.POLICY, policy === 'accept' ? 1 : 0);
        }
      }
      const ud = commentUdata(c.comment);
      if (ud) w.attrBytes(CHAIN_ATTR.USERDATA, ud);
    } else if (c.handle !== undefined) w.attrU64(CHAIN_ATTR.HANDLE, BigInt(c.handle));
    w.closeList();
    this.noExprs();
  }

  private flushRules(family: string, table: string, chain: string | undefined): void {
    this.begin(NFT_MSG.DELRULE, WireKind.Rule, 0, family);
    const w = this.w;
    w.openList();
    w.attrStr(RULE_ATTR.TABLE, table);
    if (chain !== undefined) w.attrStr(RULE_ATTR.CHAIN, chain);
    w.closeList();
    this.noExprs();
  }

  private rule(verb: Operation['verb'], r: Rule, echo: boolean): void {
    // Inline anonymous sets go first, in the same batch, referenced by their transaction id.
    const exprs = verb === 'delete' || verb === 'destroy' ? [] : this.bindInlineSets(r);
    const msg = verb === 'delete' ? NFT_MSG.DELRULE : verb === 'destroy' ? NFT_MSG.DESTROYRULE : NFT_MSG.NEWRULE;
    if (echo && msg !== NFT_MSG.NEWRULE) throw new RangeError(`echo applies to add, insert and replace, not ${verb}`);
    const nlFlags =
      verb === 'add' ? NLM_F.CREATE | NLM_F.APPEND : verb === 'insert' ? NLM_F.CREATE : verb === 'replace' ? NLM_F.REPLACE : 0;
    // ECHO only on the rule's own message (not on its inline sets): the addon returns its handle.
    this.begin(msg, WireKind.Rule, echo ? nlFlags | NLM_F.ECHO : nlFlags, r.family);
    const w = this.w;
    w.openList();
    w.attrStr(RULE_ATTR.TABLE, r.table);
    w.attrStr(RULE_ATTR.CHAIN, r.chain);
    if (verb !== 'add' && verb !== 'insert' && r.handle !== undefined) w.attrU64(RULE_ATTR.HANDLE, BigInt(r.handle));
    if ((verb === 'add' || verb === 'insert') && r.position !== undefined) w.attrU64(RULE_ATTR.POSITION, BigInt(r.position));
    if (msg === NFT_MSG.NEWRULE) {
      const ud = commentUdata(r.comment);
      if (ud) w.attrBytes(RULE_ATTR.USERDATA, ud);
    }
    w.closeList();
    w.openList();
    for (const e of exprs) encodeExpr(w, e);
    w.closeList();
  }

  /** The rule's expressions, each inline set first encoded and then referred to by its id. */
  private bindInlineSets(r: Rule): readonly Expr[] {
    const exprs = r.exprs;
    for (let i = 0; i < exprs.length; i++) {
      const e = exprs[i]!;
      if (e.type === 'lookup' && e.inline !== undefined) {
        // A packed array as the builder makes (see RuleBuilder.build): no second array map for V8.
        const bound: Expr[] = [];
        for (let j = 0; j < exprs.length; j++) bound.push(this.bindInline(exprs[j]!, r, j));
        return bound;
      }
    }
    return exprs;
  }

  private bindInline(e: Expr, r: Rule, exprIndex: number): Expr {
    if (e.type !== 'lookup' || !e.inline) return e;
    const s: NftSet = { ...e.inline, family: r.family, table: r.table, anonymous: true };
    if (!s.name || s.name.includes('%d')) s.name = `${this.anonymousPrefix}${(anonCount++).toString(36)}`;
    this.inlineExpr = exprIndex;
    try {
      const id = this.set('add', s);
      return { ...e, set: s.name, setId: id };
    } finally {
      this.inlineExpr = undefined;
    }
  }

  /** Returns the set's transaction id. */
  private set(verb: Operation['verb'], s: NftSet): number {
    if (verb === 'flush') {
      this.begin(NFT_MSG.DELSETELEM, WireKind.Elements, 0, s.family);
      this.setNameAttrs(s, undefined);
      this.noExprs();
      this.w.u32(0);
      return 0;
    }
    const msg = verb === 'delete' ? NFT_MSG.DELSET : verb === 'destroy' ? NFT_MSG.DESTROYSET : NFT_MSG.NEWSET;
    this.begin(msg, WireKind.Set, createFlags(verb), s.family);
    const w = this.w;
    const id = this.nextSetId++;
    w.openList();
    w.attrStr(SET_ATTR.TABLE, s.table);
    w.attrStr(SET_ATTR.NAME, s.name);
    if (msg === NFT_MSG.NEWSET) {
      checkDatatypes(s.key, 'set key');
      if (s.data !== 'verdict' && s.data !== undefined) checkDatatypes(s.data, 'set data');
      for (const f of s.flags ?? []) checkOneOf(f, SET_FLAGS, 'set flag');
      if (s.policy !== undefined) checkOneOf(s.policy, SET_POLICIES, 'set policy');
      const key = typeIdOf(s.key);
      const flags = setFlags(s);
      w.attrU32(SET_ATTR.FLAGS, flags);
      w.attrU32(SET_ATTR.KEY_TYPE, key.id);
      w.attrU32(SET_ATTR.KEY_LEN, key.len);
      if (s.data === 'verdict') {
        w.attrU32(SET_ATTR.DATA_TYPE, NFT_DATA_VERDICT);
        w.attrU32(SET_ATTR.DATA_LEN, 0);
      } else if (s.data) {
        const data = typeIdOf(s.data);
        w.attrU32(SET_ATTR.DATA_TYPE, data.id);
        w.attrU32(SET_ATTR.DATA_LEN, data.len);
      }
      w.attrU32(SET_ATTR.ID, id);
      if (s.policy !== undefined) w.attrU32(SET_ATTR.POLICY, s.policy === 'memory' ? 1 : 0);
      const size = s.size ?? (s.anonymous ? s.elements?.length : undefined);
      if (size !== undefined) w.attrU32(SET_ATTR.DESC_SIZE, size);
      if (flags & NFT_SET_F.concat) {
        // NFTA_SET_DESC_CONCAT: one field length per key part, as libnftnl takes it (u8s, in bytes).
        w.attrBytes(SET_ATTR.DESC_CONCAT, Uint8Array.from(s.key.map((t) => t.size)));
      }
      if (s.timeout !== undefined) w.attrU64(SET_ATTR.TIMEOUT, BigInt(s.timeout));
      if (s.gcInterval !== undefined) w.attrU32(SET_ATTR.GC_INTERVAL, s.gcInterval);
      w.attrBytes(SET_ATTR.USERDATA, setUdata(s));
    } else if (s.handle !== undefined) w.attrU64(SET_ATTR.HANDLE, BigInt(s.handle));
    w.closeList();
    this.noExprs();
    if (msg === NFT_MSG.NEWSET && s.elements?.length) this.elements('add', s, s.elements, id);
    return id;
  }

  private setNameAttrs(s: NftSet, id: number | undefined): void {
    const w = this.w;
    w.openList();
    w.attrStr(SET_ATTR.TABLE, s.table);
    // A set created in this batch goes by its transaction id alone. Why: with a name, the kernel
    // walks every set of the table comparing names before it tries the id (nft_set_lookup_global);
    // by id it walks the transaction backwards and finds the set just created at once (Linux 6.18:
    // a tenth of a 10k-service load with kube-proxy's 10k anonymous sets).
    if (id !== undefined) w.attrU32(SET_ATTR.ID, id);
    else w.attrStr(SET_ATTR.NAME, s.name);
    w.closeList();
  }

  private elements(verb: Operation['verb'], s: NftSet, elements: readonly SetElement[], setId?: number): void {
    const interval = (s.flags ?? []).includes('interval') || s.anonymous === true && elements.some(hasRangeSyntax);
    if (!interval) this.elementMessage(verb, s, setId, undefined, (isNew, what) => this.plainElements(verb, s, setId, elements, isNew, what));
    else if (s.key.length === 1) this.rangeElements(verb, s, elements, setId);
    else this.elementMessage(verb, s, setId, undefined, (isNew, what) => this.concatRangeElements(s, elements, isNew, what));
  }

  /**
   * The element message of a set: its header, then what `body` writes. `sources` maps wire
   * elements to the caller's where they differ (interval markers).
   */
  private elementMessage<T>(
    verb: Operation['verb'],
    s: NftSet,
    setId: number | undefined,
    sources: Int32Array | undefined,
    body: (isNew: boolean, what: string) => T,
  ): T {
    this.elementHeader(verb, s, setId, sources);
    return body(elementMsgType(verb) === NFT_MSG.NEWSETELEM, describeSet(s));
  }

  /** The header of an element message, also of each later one of a long list (nextElementOp). */
  private elementHeader(verb: Operation['verb'], s: NftSet, setId: number | undefined, sources: Int32Array | undefined): void {
    this.begin(elementMsgType(verb), WireKind.Elements, createFlags(verb), s.family, sources);
    this.setNameAttrs(s, setId);
    this.noExprs();
  }

  /** A single-field interval set: nft's start and end markers (intervalElements), sorted. */
  private rangeElements(verb: Operation['verb'], s: NftSet, elements: readonly SetElement[], setId: number | undefined): void {
    const isNew = elementMsgType(verb) === NFT_MSG.NEWSETELEM;
    const what = describeSet(s);
    const type = s.key[0]!;
    const ranges = elements.map((e, i) => parseIntervalValue(type, e.key[0]!, e.keyEnd?.[0], `${what} element ${i}`));
    // Deleting ranges must leave nft's leading marker alone: the other ranges still need it.
    const wire = intervalElements(type, ranges, what, s.anonymous === true && !s.data).filter((e) => isNew || e.source >= 0);
    const w = this.w;
    this.elementMessage(verb, s, setId, Int32Array.from(wire, (e) => e.source), () => {
      w.openList(true);
      for (const we of wire) {
        const src = we.source >= 0 ? elements[we.source]! : undefined;
        w.item();
        w.openList();
        w.attrBytes(ELEM_ATTR.KEY, we.key);
        if (we.end) w.attrU32(ELEM_ATTR.FLAGS, NFT_SET_ELEM_F.interval_end);
        else if (src && isNew) this.elementPayload(s, src, what, we.source);
        w.closeList();
        this.noExprs();
      }
      w.closeList();
    });
  }

  /** Concatenated intervals (pipapo, Linux 5.6): each element's key and an inclusive KEY_END. */
  private concatRangeElements(s: NftSet, elements: readonly SetElement[], isNew: boolean, what: string): void {
    const w = this.w;
    w.openList(true);
    for (let i = 0; i < elements.length; i++) {
      const e = elements[i]!;
      w.item();
      w.openList();
      const from = s.key.map((t, f) => parseIntervalValue(t, e.key[f]!, e.keyEnd?.[f], `${what} element ${i}`));
      w.attrBytes(ELEM_ATTR.KEY, encodeConcatBytes(s.key, from.map((r) => r.from)));
      w.attrBytes(ELEM_ATTR.KEY_END, encodeConcatBytes(s.key, from.map((r) => r.to)));
      if (isNew) this.elementPayload(s, e, what, i);
      w.closeList();
      this.noExprs();
    }
    w.closeList();
  }

  /**
   * Elements of a plain set or map: the hot path of large syncs (100,000 elements in one
   * transaction), written straight into the buffer. Verdict maps and the rest have a loop each, so
   * that V8 sees one shape of element value per loop: one loop for both (an array of values here, a
   * verdict object there) was deoptimised and compiled again when a transaction held both kinds
   * (three TurboFan compiles of 12-13 ms in a 10k-service load, Node 20).
   */
  private plainElements(
    verb: Operation['verb'],
    s: NftSet,
    setId: number | undefined,
    elements: Iterable<SetElement>,
    isNew: boolean,
    what: string,
    inspect?: ElementInspector,
  ): ElementRun[] {
    const list = this.openElementList(verb, s, setId);
    return isNew && s.data === 'verdict' ? this.verdictElements(s, elements, what, list, inspect) : this.dataElements(s, elements, isNew, what, list, inspect);
  }

  private openElementList(verb: Operation['verb'], set: NftSet, setId: number | undefined): ElementList {
    const countAt = this.w.length;
    // The count is patched at the end: an iterable tells it only by ending.
    this.w.u32(0);
    return { countAt, first: 0, runs: [], verb, set, setId };
  }

  /**
   * Ends the list's current operation before element `i` and opens the next for the same set,
   * then feeds what is finished. Returns the position at which the next one is due. Called
   * through the list's ElementOutput, with the writer at the current position.
   */
  private nextElementOp(list: ElementList, i: number): number {
    const w = this.w;
    w.patchU32(list.countAt, i - list.first);
    list.runs.push({ at: list.countAt + 4, count: i - list.first });
    const opAt = w.length;
    this.elementHeader(list.verb, list.set, list.setId, undefined);
    this.origins.setElementBase(i);
    list.countAt = w.length;
    list.first = i;
    w.u32(0);
    this.offer(opAt, this.origins.length - 1);
    return w.length + ELEMENT_OP_BYTES;
  }

  /** The writer of a list's elements, which ends its operations where they are due. */
  private elementOutput(list: ElementList): ElementOutput {
    const cutAt = this.sink ? this.w.length + ELEMENT_OP_BYTES : NO_CUT;
    return new ElementOutput(this.w, cutAt, (i, due) => (this.w.length >= due ? this.nextElementOp(list, i) : due));
  }

  private closeElementList(list: ElementList, end: number): ElementRun[] {
    this.w.patchU32(list.countAt, end - list.first);
    list.runs.push({ at: list.countAt + 4, count: end - list.first });
    return list.runs;
  }

  /**
   * Keys, and the values of a data map. Elements with a comment or a timeout take the general path.
   * The loop is small and each element is written by a function of its own (dataElement): V8
   * optimises a function after a number of bytecodes that grows with its size, and a loop that
   * runs once, as a dispatch map's 10,000 elements do, got its optimised code only after it had
   * ended when loop and element were one function (Node 20).
   */
  private dataElements(s: NftSet, elements: Iterable<SetElement>, isNew: boolean, what: string, list: ElementList, inspect?: ElementInspector): ElementRun[] {
    const w = this.w;
    const keyLen = valuesLength(s.key);
    const data = isNew && s.data !== undefined && s.data !== 'verdict' ? s.data : undefined;
    const dataLen = data ? valuesLength(data) : 0;
    // One element: attr count, KEY, then DATA, then an empty expression list.
    const fixed = 2 + 6 + keyLen + (data ? 6 + dataLen : 0) + 2;
    if (Array.isArray(elements)) w.expect(fixed * elements.length);
    const out = this.elementOutput(list);
    let i = 0;
    for (const e of elements) {
      if (e.comment !== undefined || e.timeout !== undefined) this.outOfLine(out, s, e, isNew, what, i, inspect);
      else dataElement(out, s.key, keyLen, data, dataLen, fixed, e, what, i);
      i++;
    }
    out.handOver();
    return this.closeElementList(list, i);
  }

  /**
   * Elements of a verdict map being added: key, verdict and, for a jump or goto, the chain's name
   * (kube-proxy's dispatch maps: every element is `... : goto <service chain>`). Elements with a
   * comment, a timeout or a chain name that is not ASCII take the general path.
   */
  private verdictElements(s: NftSet, elements: Iterable<SetElement>, what: string, list: ElementList, inspect?: ElementInspector): ElementRun[] {
    const keyLen = valuesLength(s.key);
    const out = this.elementOutput(list);
    let i = 0;
    for (const e of elements) {
      if (!verdictElement(out, s.key, keyLen, e, what, i, inspect)) this.outOfLine(out, s, e, true, what, i, inspect);
      i++;
    }
    out.handOver();
    return this.closeElementList(list, i);
  }

  /** An element of a hot loop that takes the general path (generalElement). */
  private outOfLine(out: ElementOutput, s: NftSet, e: SetElement, isNew: boolean, what: string, i: number, inspect: ElementInspector | undefined): void {
    // Ends the operation here if it is due (the element's own room is the writer's to make).
    out.slowRoom(0, i);
    out.handOver();
    this.generalElement(s, e, isNew, what, i, inspect);
    out.takeBack();
  }

  /** One element through the attribute writer (after `inspect` has seen it). */
  private generalElement(s: NftSet, e: SetElement, isNew: boolean, what: string, i: number, inspect?: ElementInspector): void {
    inspect?.(e, i);
    const w = this.w;
    w.openList();
    this.attrValues(ELEM_ATTR.KEY, s.key, e.key, what, i, 'key');
    if (isNew) this.elementPayload(s, e, what, i);
    w.closeList();
    this.noExprs();
  }

  private elementPayload(s: NftSet, e: SetElement, what: string, i: number): void {
    const w = this.w;
    if (s.data === 'verdict') {
      const v = e.value as Verdict | undefined;
      if (!v || Array.isArray(v)) throw new RangeError(`${what} element ${i}: a verdict map element needs a verdict value`);
      w.attrU32(ELEM_ATTR.VERDICT, verdictCode(v));
      if (v.kind === 'jump' || v.kind === 'goto') w.attrStr(ELEM_ATTR.CHAIN, v.chain);
    } else if (s.data) {
      if (!Array.isArray(e.value)) throw new RangeError(`${what} element ${i}: a map element needs a value`);
      this.attrValues(ELEM_ATTR.DATA, s.data, e.value, what, i, 'value');
    }
    if (e.timeout !== undefined) w.attrU64(ELEM_ATTR.TIMEOUT, BigInt(e.timeout));
    const ud = commentUdata(e.comment);
    if (ud) w.attrBytes(ELEM_ATTR.USERDATA, ud);
  }

  /** Element keys and values go straight into the request buffer: no allocation per element. */
  private attrValues(id: number, types: readonly Datatype[], values: readonly Scalar[], what: string, i: number, part: string): void {
    const w = this.w;
    const at = w.attrInPlace(id, valuesLength(types));
    try {
      writeValues(types, values, w.bytes, at);
    } catch (err) {
      throw new RangeError(`${what} element ${i} ${part}: ${(err as Error).message}`);
    }
  }

  private noExprs(): void {
    this.w.u16(0);
  }

  /** The request as it stands; later operations may still be added (the buffer is a view). */
  finish(opts: EncodeOptions = {}): EncodedRequest {
    const flags = (opts.check ? WIRE_FLAG_CHECK : 0) | (opts.generation !== undefined ? WIRE_FLAG_GENID : 0);
    this.w.patchHeader(flags, opts.generation ?? 0);
    this.w.patchU32(this.countAt, this.origins.length);
    return { buffer: this.w.finish(), origins: this.origins.copy() };
  }

  get size(): number {
    return this.w.length;
  }
}

function encodeConcatBytes(types: readonly Datatype[], parts: readonly Uint8Array[]): Uint8Array {
  if (types.length === 1) return parts[0]!;
  const total = types.reduce((s, t) => s + Math.ceil(t.size / 4) * 4, 0);
  const out = new Uint8Array(total);
  let at = 0;
  types.forEach((t, i) => {
    out.set(parts[i]!, at);
    at += Math.ceil(t.size / 4) * 4;
  });
  return out;
}

/**
 * Whether this set's elements can be encoded one at a time, in the order they come (and so taken
 * from a stream): not an interval set, whose ranges are sorted and paired first, and not an
 * anonymous set, whose elements may be ranges (hasRangeSyntax).
 */
export function streamsElements(s: NftSet): boolean {
  return !s.anonymous && !(s.flags ?? []).includes('interval');
}

/** The element message a verb sends: delete and destroy remove, every other verb adds. */
function elementMsgType(verb: Operation['verb']): number {
  return verb === 'delete' ? NFT_MSG.DELSETELEM : verb === 'destroy' ? NFT_MSG.DESTROYSETELEM : NFT_MSG.NEWSETELEM;
}

/** How errors name a set: `map kube-proxy service-ips`. */
function describeSet(s: NftSet): string {
  return `${s.data ? 'map' : 'set'} ${s.table} ${s.name}`;
}

function hasRangeSyntax(e: SetElement): boolean {
  return e.keyEnd !== undefined || e.key.some((k) => typeof k === 'string' && (k.includes('/') || /^[^:]+-/.test(k)));
}

function createFlags(verb: Operation['verb']): number {
  if (verb === 'add') return NLM_F.CREATE;
  if (verb === 'create') return NLM_F.CREATE | NLM_F.EXCL;
  return 0;
}

export function setFlags(s: NftSet): number {
  let f = 0;
  const flags = s.flags ?? [];
  if (s.anonymous) f |= NFT_SET_F.anonymous | NFT_SET_F.constant;
  if (flags.includes('constant')) f |= NFT_SET_F.constant;
  const interval = flags.includes('interval') || (s.anonymous === true && (s.elements ?? []).some(hasRangeSyntax));
  if (interval) f |= NFT_SET_F.interval;
  if (s.data) f |= NFT_SET_F.map;
  if (flags.includes('timeout') || s.timeout !== undefined) f |= NFT_SET_F.timeout;
  if (flags.includes('dynamic')) f |= NFT_SET_F.eval;
  if (interval && s.key.length > 1) f |= NFT_SET_F.concat;
  return f;
}

/** The set userdata nft 1.0.6 writes for a `type ...` declaration. */
export function setUdata(s: NftSet): Uint8Array {
  const u = new UdataBuilder();
  const order = (types: readonly Datatype[]): number => (types.length > 1 ? 0 : types[0]!.byteorder === 'big' ? 2 : 1);
  u.u32(UDATA.SET_KEYBYTEORDER, order(s.key));
  if (s.data) u.u32(UDATA.SET_DATABYTEORDER, s.data === 'verdict' ? 0 : order(s.data));
  if (s.typeof) {
    u.nest(UDATA.SET_KEY_TYPEOF, typeofUdata(s.typeof.key));
    if (s.data === 'verdict') u.nest(UDATA.SET_DATA_TYPEOF, verdictTypeofUdata());
    else if (s.typeof.data) u.nest(UDATA.SET_DATA_TYPEOF, typeofUdata(s.typeof.data));
  } else if (s.key.length > 1) {
    u.nest(UDATA.SET_KEY_TYPEOF, new UdataBuilder().u32(UDATA.SET_TYPEOF_EXPR, NFT_EXPR_CONCAT).nest(UDATA.SET_TYPEOF_DATA, new UdataBuilder()));
  }
  if (s.data) u.u32(UDATA.SET_DATA_INTERVAL, 0);
  if (s.comment !== undefined) u.strz(UDATA.SET_COMMENT, s.comment);
  return u.bytes();
}

export function encodeRequest(ops: readonly Operation[], opts: EncodeOptions = {}): EncodedRequest {
  const enc = new RequestEncoder();
  ops.forEach((op, i) => enc.add(op, i));
  return enc.finish(opts);
}
