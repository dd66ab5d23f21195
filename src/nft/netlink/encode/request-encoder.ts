// Operations -> the compact request buffer: its header, one operation at a time through the
// per-kind encoders, a rollback when one fails half way, and the feeding of finished operations to
// a sink while the transaction is still being built.

import type { SetElement } from '../../objects.js';
import type { Operation } from '../../operations.js';
import { codeOf } from '../../validate.js';
import { NFPROTO } from '../constants.js';
import { WireKind, WIRE_FLAG_CHECK, WIRE_FLAG_GENID } from '../wire-format.js';
import { WireWriter } from './wire-writer.js';
import { encodeChain } from './chain.js';
import type { ElementInspector } from './element-writer.js';
import { encodeElements, encodeElementStream, type ElementRun } from './elements.js';
import { encodeFlowtable } from './flowtable.js';
import { encodeObject } from './object.js';
import type { MessageWriter } from './message-writer.js';
import { WireOrigins } from './origins.js';
import { encodeRule } from './rule.js';
import { encodeSet } from './set.js';
import { encodeTable } from './table.js';

// The families an object can be in: NFPROTO less unspec, which only a dump asks for.
const { unspec: _unspec, ...OBJECT_FAMILY } = NFPROTO;

export interface EncodedRequest {
  buffer: Uint8Array;
  origins: WireOrigins;
}

export interface EncodeOptions {
  check?: boolean;
  /** Compare-and-swap: the kernel refuses the batch unless the ruleset is still at this generation. */
  generation?: number;
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
 * Names for anonymous sets: a prefix unique to the writer, then a counter, instead of nft's
 * `__set%d`. Why: for a `%d` name the kernel walks every set in the table parsing each name to
 * find a free number (nf_tables_set_alloc_name); with 10,000 anonymous sets in kube-proxy's layout
 * that walk is quadratic. An explicit name costs one lookup, and a short one is cheaper still:
 * every lookup by name pays a strlen of each set's name (nla_strcmp); docs/decisions.md has the
 * load times. nft lists anonymous sets inline, names unseen.
 * The default prefix is random; a writer that can do better passes its own (the proxy uses the
 * ruleset generation it started from, which no earlier writer of the table can have used).
 */
const DEFAULT_ANON_PREFIX = `${Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, '0')}_`;
let anonCount = 0;

export class RequestEncoder implements MessageWriter {
  // Small at first, so that the buffer grows within the first operations: V8 then has seen the
  // writer's growth path before it optimises the functions that inline it. Starting at 64 KiB, the
  // first growth came after they were compiled, and each (attrStr, encodedItem) was deoptimised
  // and compiled again (Node 20). Doubling makes the extra growths cost little, except for a run
  // of big requests (a cold start's parts), which say how big they expect to be (expectedBytes).
  readonly w: WireWriter;
  readonly origins = new WireOrigins();
  inlineExpr: number | undefined;
  private nextSetId = 1;
  private opIndex = 0;

  private readonly countAt: number;
  /** Where finished operations go as they are encoded (streamTo), and how far they went. */
  private sink: RequestSink | undefined;
  private fedAt: number;
  private fedOps = 0;

  constructor(
    private readonly anonymousPrefix = DEFAULT_ANON_PREFIX,
    expectedBytes = 0,
  ) {
    // A quarter over the expectation: the next part of a run is seldom exactly as big as the last.
    this.w = new WireWriter(Math.max(4096, Math.ceil(expectedBytes * 1.25)));
    this.countAt = this.w.header(0, 0);
    this.fedAt = this.w.length;
  }

  get streaming(): boolean {
    return this.sink !== undefined;
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
  offer(upTo: number, ops: number, min = FEED_BYTES): void {
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

  begin(msgType: number, kind: WireKind, nlFlags: number, family: string, elements?: Int32Array): void {
    this.w.op(msgType, kind, nlFlags, codeOf(OBJECT_FAMILY, family, 'family'));
    this.origins.push(this.opIndex, kind, elements, this.inlineExpr);
  }

  takeSetId(): number {
    return this.nextSetId++;
  }

  anonymousSetName(): string {
    return `${this.anonymousPrefix}${(anonCount++).toString(36)}`;
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
   * 100,000 that survive until the commit, which the collector copied twice (docs/decisions.md).
   * `inspect` sees each element that carries more than a key and a value (a comment, a timeout,
   * a jump) before it is written. Returns where the elements sit in the buffer, so the
   * transaction can decode them back when it must show them (decodeRequestElements); none when
   * the iterable gave no element, and then nothing is written.
   */
  addElementStream(op: Extract<Operation, { kind: 'element' }>, index: number, source: Iterable<SetElement>, inspect: ElementInspector): ElementRun[] {
    const mark = this.w.mark();
    const origins = this.origins.length;
    const nextSetId = this.nextSetId;
    let runs: ElementRun[];
    try {
      this.opIndex = index;
      runs = encodeElementStream(this, op.verb, op.set, source, inspect);
    } catch (err) {
      this.rollback(mark, origins, nextSetId);
      throw err;
    }
    // A stream that gave nothing leaves no message: one without elements is a flush to the
    // kernel's DELSETELEM and EINVAL to its NEWSETELEM (Transaction.queue queues nothing for it).
    if (runs.every((r) => r.count === 0)) {
      this.rollback(mark, origins, nextSetId);
      return [];
    }
    this.offer(this.w.length, this.origins.length);
    return runs;
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
        return encodeTable(this, op.verb, op.table);
      case 'chain':
        return encodeChain(this, op.verb, op.chain);
      case 'rule':
        return encodeRule(this, op.verb, op.rule, op.echo === true);
      case 'set':
        encodeSet(this, op.verb, op.set);
        return;
      case 'element':
        return encodeElements(this, op.verb, op.set, op.elements);
      case 'object':
        return encodeObject(this, op.verb, op.object);
      case 'flowtable':
        return encodeFlowtable(this, op.verb, op.flowtable);
    }
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

export function encodeRequest(ops: readonly Operation[], opts: EncodeOptions = {}): EncodedRequest {
  const enc = new RequestEncoder();
  ops.forEach((op, i) => enc.add(op, i));
  return enc.finish(opts);
}
