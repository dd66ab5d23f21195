// What the per-kind encoders (table.ts, chain.ts, rule.ts, set.ts, elements.ts) write through: the
// request's buffer and origins, and the state one request keeps. RequestEncoder is the only
// implementation, so calls through it stay monomorphic for V8.

import type { Verb } from '../../operations.js';
import { NLM_F } from '../constants.js';
import type { WireKind } from '../wire-format.js';
import type { WireWriter } from './wire-writer.js';
import type { WireOrigins } from './origins.js';

export interface MessageWriter {
  readonly w: WireWriter;
  readonly origins: WireOrigins;
  /** Starts the next message of the current operation and records where it came from. */
  begin(msgType: number, kind: WireKind, nlFlags: number, family: string, elements?: Int32Array): void;
  /** A transaction id for a set created in this batch. */
  takeSetId(): number;
  /** A name for an anonymous set (see DEFAULT_ANON_PREFIX in request-encoder.ts). */
  anonymousSetName(): string;
  /** While a rule's inline set is encoded: the index of the expression that holds it. */
  inlineExpr: number | undefined;
  /** Whether finished operations go to a sink as they are encoded (long element lists are then cut). */
  readonly streaming: boolean;
  /** Feeds the finished operations up to byte `upTo` (`ops` in all) once enough of them wait. */
  offer(upTo: number, ops: number): void;
}

/** The netlink flags of an object's message: add creates if missing, create also refuses an existing one. */
export function createFlags(verb: Verb): number {
  if (verb === 'add') return NLM_F.CREATE;
  if (verb === 'create') return NLM_F.CREATE | NLM_F.EXCL;
  return 0;
}

/** The empty expression list that ends every message but a rule's. */
export function noExprs(w: WireWriter): void {
  w.u16(0);
}
