// Every kernel expression nftlink models, one file each; this file joins them into the Expr union
// and the codec registry that the encoder and decoder share.

import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { bitwiseCodec, type BitwiseExpr } from './bitwise.js';
import { byteorderCodec, type ByteorderExpr } from './byteorder.js';
import { cmpCodec, type CmpExpr } from './cmp.js';
import type { ExprCodec } from './codec.js';
import { counterCodec, type CounterExpr } from './counter.js';
import { ctCodec, type CtExpr } from './ct.js';
import { dynsetCodec, type DynsetExpr } from './dynset.js';
import { fibCodec, type FibExpr } from './fib.js';
import { flowOffloadCodec, type FlowOffloadExpr } from './flow-offload.js';
import { immediateCodec, type ImmediateExpr } from './immediate.js';
import { limitCodec, type LimitExpr } from './limit.js';
import { logCodec, type LogExpr } from './log.js';
import { lookupCodec, type LookupExpr } from './lookup.js';
import { masqCodec, type MasqExpr } from './masq.js';
import { metaCodec, type MetaExpr } from './meta.js';
import { natCodec, type NatExpr } from './nat.js';
import { numgenCodec, type NumgenExpr } from './numgen.js';
import { objrefCodec, type ObjrefExpr } from './objref.js';
import { payloadCodec, type PayloadExpr } from './payload.js';
import { rangeCodec, type RangeExpr } from './range.js';
import { rejectCodec, type RejectExpr } from './reject.js';
import { rtCodec, type RtExpr } from './rt.js';
import { socketCodec, type SocketExpr } from './socket.js';
import { hashCodec, type HashExpr } from './hash.js';
import { decodeUnknown, type UnknownExpr } from './unknown.js';

export type {
  BitwiseExpr,
  ByteorderExpr,
  CmpExpr,
  CounterExpr,
  CtExpr,
  DynsetExpr,
  FibExpr,
  FlowOffloadExpr,
  ImmediateExpr,
  LimitExpr,
  LogExpr,
  LookupExpr,
  MasqExpr,
  MetaExpr,
  NatExpr,
  NumgenExpr,
  ObjrefExpr,
  PayloadExpr,
  RangeExpr,
  RejectExpr,
  RtExpr,
  SocketExpr,
  HashExpr,
  UnknownExpr,
};

export type Expr =
  | PayloadExpr
  | MetaExpr
  | CmpExpr
  | BitwiseExpr
  | RangeExpr
  | LookupExpr
  | ImmediateExpr
  | CounterExpr
  | NumgenExpr
  | NatExpr
  | MasqExpr
  | RejectExpr
  | CtExpr
  | DynsetExpr
  | FibExpr
  | ObjrefExpr
  | FlowOffloadExpr
  | LimitExpr
  | LogExpr
  | ByteorderExpr
  | RtExpr
  | SocketExpr
  | HashExpr
  | UnknownExpr;

type KnownExpr = Exclude<Expr, UnknownExpr>;

const CODECS: ExprCodec<KnownExpr>[] = [
  payloadCodec,
  metaCodec,
  cmpCodec,
  bitwiseCodec,
  rangeCodec,
  lookupCodec,
  immediateCodec,
  counterCodec,
  numgenCodec,
  natCodec,
  masqCodec,
  rejectCodec,
  ctCodec,
  dynsetCodec,
  fibCodec,
  objrefCodec,
  flowOffloadCodec,
  limitCodec,
  logCodec,
  byteorderCodec,
  rtCodec,
  socketCodec,
  hashCodec,
] as unknown as ExprCodec<KnownExpr>[];

const BY_TYPE = new Map(CODECS.map((c) => [c.type, c]));
const BY_NAME = new Map(CODECS.map((c) => [c.name, c]));

/**
 * The encoding of each frozen expression, written once and copied after. The rule builder shares
 * one frozen object for each expression that recurs rule after rule (builder/shared-exprs.ts:
 * `meta l4proto`, `cmp eq tcp`, a `numgen`, a lookup in a named map, the DNAT of a map's
 * `addr . port`, which is all five expressions of a service's DNAT rule through a shared endpoint
 * map), so a 10k-service load encodes each of them once instead of thousands of times, and their
 * codecs never get hot enough for V8 to compile them. A frozen expression is taken as immutable,
 * the bytes it holds (a cmp's data) included. Its encoding depends on nothing else: expressions
 * that name a transaction's own objects by id (an inline set's lookup) are fresh objects.
 */
const frozenEncodings = new WeakMap<Expr, Uint8Array>();

/** Writes one expression: name, attributes, nested expressions. */
export function encodeExpr(w: WireWriter, e: Expr): void {
  // The cache first: Object.isFrozen is a call into C++ that walks the object's properties (V8 11,
  // Node 20: not inlined), made once per expression instead of once per use.
  const known = frozenEncodings.get(e);
  if (known !== undefined) return w.encodedItem(known);
  if (!Object.isFrozen(e)) return encodeFresh(w, e);
  const start = w.length;
  encodeFresh(w, e);
  frozenEncodings.set(e, w.bytes.slice(start, w.length));
}

function encodeFresh(w: WireWriter, e: Expr): void {
  if (e.type === 'unknown') {
    w.exprName(e.name);
    w.openList();
    for (const [id, bytes] of e.attrs) w.attrBytes(id, bytes);
    w.closeList();
    w.openList();
    for (const n of e.exprs ?? []) encodeExpr(w, n);
    w.closeList();
    return;
  }
  const codec = BY_TYPE.get(e.type);
  if (!codec) throw new Error(`nftlink: no codec for expression type "${e.type}"`);
  w.exprName(codec.name);
  w.openList();
  codec.encodeAttrs(w, e);
  w.closeList();
  w.openList();
  for (const n of codec.nested?.(e) ?? []) encodeExpr(w, n as Expr);
  w.closeList();
}

/**
 * Reads one dumped expression. What nftlink does not model, an expression it does not know or a
 * known one with a key, base or mode it does not (a newer kernel's meta key, a bitwise shift), is
 * kept raw: a dump of a ruleset someone else wrote always decodes, and re-encodes to the same bytes.
 */
export function decodeExpr(x: WireExpr): Expr {
  const codec = BY_NAME.get(x.name);
  if (!codec) return decodeUnknown(x);
  try {
    return codec.decode(x, decodeExpr);
  } catch {
    return decodeUnknown(x);
  }
}
