// The addon's dump buffer -> the object model. Anonymous sets are attached to the lookups that use
// them, so a decoded rule renders (and re-encodes) with its inline set.

import { decodeExpr, type Expr } from '../expr/index.js';
import type { Chain, ChainType, NftSet, Rule, Ruleset, SetElement, SetFlag, Table } from '../objects.js';
import type { Operation } from '../operations.js';
import { integer, typesFromId, type Datatype } from '../types/datatypes.js';
import { parseTypeof } from '../types/typeof.js';
import { verdictFromCode } from '../types/verdict.js';
import { decodeValues, rangesFromIntervalElements, readValues, splitFields } from '../values.js';
import { CHAIN_ATTR, ELEM_ATTR, RULE_ATTR, SET_ATTR, TABLE_ATTR, UDATA } from './attrs.js';
import { FAMILY_BY_NUMBER, NF_INET_HOOK, NFT_DATA_VERDICT, NFT_MSG, NFT_SET_ELEM_F, NFT_SET_F, NFT_TABLE_F, NLM_F, type Family, type Hook } from './constants.js';
import { parseUdata, udataString, udataU32 } from './udata.js';
import {
  getBytes,
  getS32,
  getStr,
  getU32,
  getU64,
  WireKind,
  WireReader,
  type ElementVisitor,
  type WireElement,
  type WireObject,
} from './wire.js';

const HOOK_BY_NUMBER = Object.fromEntries(Object.entries(NF_INET_HOOK).map(([k, v]) => [v, k])) as Record<number, Hook>;

function familyOf(o: WireObject): Family {
  const f = FAMILY_BY_NUMBER[o.family];
  if (!f) throw new Error(`nftlink: unknown family ${o.family} in a dump`);
  return f;
}

function num(v: bigint | undefined): number | undefined {
  return v === undefined ? undefined : Number(v);
}

function decodeTable(o: WireObject): Table {
  const t: Table = { family: familyOf(o), name: getStr(o.attrs, TABLE_ATTR.NAME) ?? '' };
  const flags = getU32(o.attrs, TABLE_ATTR.FLAGS) ?? 0;
  const names = (Object.keys(NFT_TABLE_F) as (keyof typeof NFT_TABLE_F)[]).filter((f) => flags & NFT_TABLE_F[f]);
  if (names.length) t.flags = names;
  const comment = udataString(parseUdata(getBytes(o.attrs, TABLE_ATTR.USERDATA)).get(UDATA.TABLE_COMMENT));
  if (comment !== undefined) t.comment = comment;
  const handle = num(getU64(o.attrs, TABLE_ATTR.HANDLE));
  if (handle !== undefined) t.handle = handle;
  return t;
}

function decodeChain(o: WireObject): Chain {
  const c: Chain = {
    family: familyOf(o),
    table: getStr(o.attrs, CHAIN_ATTR.TABLE) ?? '',
    name: getStr(o.attrs, CHAIN_ATTR.NAME) ?? '',
  };
  const hook = getU32(o.attrs, CHAIN_ATTR.HOOKNUM);
  if (hook !== undefined) {
    c.base = {
      type: (getStr(o.attrs, CHAIN_ATTR.TYPE) ?? 'filter') as ChainType,
      hook: HOOK_BY_NUMBER[hook] ?? 'prerouting',
      priority: getS32(o.attrs, CHAIN_ATTR.PRIO) ?? 0,
    };
    const policy = getU32(o.attrs, CHAIN_ATTR.POLICY);
    if (policy !== undefined) c.base.policy = policy === 1 ? 'accept' : 'drop';
  }
  const comment = udataString(parseUdata(getBytes(o.attrs, CHAIN_ATTR.USERDATA)).get(UDATA.CHAIN_COMMENT));
  if (comment !== undefined) c.comment = comment;
  const handle = num(getU64(o.attrs, CHAIN_ATTR.HANDLE));
  if (handle !== undefined) c.handle = handle;
  return c;
}

/**
 * A plain `integer` key has no byte order of its own: nft records it in the userdata (an interval
 * map keyed by `numgen inc` stores network-order keys, converted by a byteorder expression).
 */
function withByteorder(types: Datatype[], order: number | undefined): Datatype[] {
  if (types.length !== 1 || types[0]!.name !== 'integer' || order !== 2) return types;
  return [integer(types[0]!.size, 'big')];
}

function decodeSet(o: WireObject): NftSet {
  const flags = getU32(o.attrs, SET_ATTR.FLAGS) ?? 0;
  const udata = parseUdata(getBytes(o.attrs, SET_ATTR.USERDATA));
  const s: NftSet = {
    family: familyOf(o),
    table: getStr(o.attrs, SET_ATTR.TABLE) ?? '',
    name: getStr(o.attrs, SET_ATTR.NAME) ?? '',
    key: withByteorder(
      typesFromId(getU32(o.attrs, SET_ATTR.KEY_TYPE) ?? 0, getU32(o.attrs, SET_ATTR.KEY_LEN) ?? 0),
      udataU32(udata.get(UDATA.SET_KEYBYTEORDER)),
    ),
  };
  if (flags & NFT_SET_F.map) {
    const dt = getU32(o.attrs, SET_ATTR.DATA_TYPE) ?? 0;
    s.data =
      dt === NFT_DATA_VERDICT
        ? 'verdict'
        : withByteorder(typesFromId(dt, getU32(o.attrs, SET_ATTR.DATA_LEN) ?? 0), udataU32(udata.get(UDATA.SET_DATABYTEORDER)));
  }
  // The order nft lists them in: constant, dynamic, interval, timeout.
  const fl: SetFlag[] = [];
  if (flags & NFT_SET_F.anonymous) s.anonymous = true;
  else if (flags & NFT_SET_F.constant) fl.push('constant');
  if (flags & NFT_SET_F.eval) fl.push('dynamic');
  if (flags & NFT_SET_F.interval) fl.push('interval');
  if (flags & NFT_SET_F.timeout) fl.push('timeout');
  if (fl.length) s.flags = fl;
  const timeout = num(getU64(o.attrs, SET_ATTR.TIMEOUT));
  if (timeout !== undefined) s.timeout = timeout;
  const gc = getU32(o.attrs, SET_ATTR.GC_INTERVAL);
  if (gc !== undefined) s.gcInterval = gc;
  const size = getU32(o.attrs, SET_ATTR.DESC_SIZE);
  if (size !== undefined) s.size = size;
  const policy = getU32(o.attrs, SET_ATTR.POLICY);
  if (policy !== undefined) s.policy = policy === 1 ? 'memory' : 'performance';
  const keyTypeof = parseTypeof(udata.get(UDATA.SET_KEY_TYPEOF));
  if (keyTypeof) {
    s.typeof = { key: keyTypeof };
    const dataTypeof = parseTypeof(udata.get(UDATA.SET_DATA_TYPEOF));
    if (dataTypeof) s.typeof.data = dataTypeof;
  }
  const comment = udataString(udata.get(UDATA.SET_COMMENT));
  if (comment !== undefined) s.comment = comment;
  const handle = num(getU64(o.attrs, SET_ATTR.HANDLE));
  if (handle !== undefined) s.handle = handle;
  return s;
}

function elementPayload(s: NftSet, e: WireElement, out: SetElement): void {
  if (s.data === 'verdict') {
    const code = getU32(e.attrs, ELEM_ATTR.VERDICT);
    if (code !== undefined) out.value = verdictFromCode(code, getStr(e.attrs, ELEM_ATTR.CHAIN));
  } else if (s.data) {
    const data = getBytes(e.attrs, ELEM_ATTR.DATA);
    if (data) out.value = decodeValues(s.data, data);
  }
  const timeout = num(getU64(e.attrs, ELEM_ATTR.TIMEOUT));
  if (timeout !== undefined) out.timeout = timeout;
  const expires = num(getU64(e.attrs, ELEM_ATTR.EXPIRATION));
  if (expires !== undefined) out.expires = expires;
  const udata = getBytes(e.attrs, ELEM_ATTR.USERDATA);
  if (udata) {
    const comment = udataString(parseUdata(udata).get(UDATA.SET_ELEM_COMMENT));
    if (comment !== undefined) out.comment = comment;
  }
}

/** Decodes the wire elements of a set (interval sets pair their start and end markers). */
export function decodeElements(s: NftSet, elems: readonly WireElement[]): SetElement[] {
  const interval = (s.flags ?? []).includes('interval');
  if (interval && s.key.length === 1) {
    const type: Datatype = s.key[0]!;
    const marks = elems.map((e, index) => ({
      key: getBytes(e.attrs, ELEM_ATTR.KEY) ?? new Uint8Array(type.size),
      end: ((getU32(e.attrs, ELEM_ATTR.FLAGS) ?? 0) & NFT_SET_ELEM_F.interval_end) !== 0,
      index,
    }));
    return rangesFromIntervalElements(type, marks).map((r) => {
      const out: SetElement = { key: [type.toValue(r.from)] };
      if (!bytesEqual(r.from, r.to)) out.keyEnd = [type.toValue(r.to)];
      elementPayload(s, elems[r.index]!, out);
      return out;
    });
  }
  return elems.map((e) => {
    const key = getBytes(e.attrs, ELEM_ATTR.KEY) ?? new Uint8Array(0);
    const out: SetElement = { key: decodeValues(s.key, key) };
    const keyEnd = getBytes(e.attrs, ELEM_ATTR.KEY_END);
    if (keyEnd) {
      const from = splitFields(s.key, key);
      const to = splitFields(s.key, keyEnd);
      if (from.some((f, i) => !bytesEqual(f, to[i]!))) out.keyEnd = decodeValues(s.key, keyEnd);
    }
    elementPayload(s, e, out);
    return out;
  });
}

/**
 * The elements of one dump object, appended to `into`. Plain (non-interval) sets take the fast
 * path: attributes are read in place, one SetElement and its value arrays allocated per element and
 * nothing else (no array per part to copy from: a 100k-element dump arrives in about 100 parts).
 */
function decodeElementsOf(s: NftSet, o: WireObject, into: SetElement[], keys?: string[]): void {
  if ((s.flags ?? []).includes('interval')) {
    for (const e of decodeElements(s, o.readElements())) into.push(e);
    return;
  }
  decodePlainElements(s, (visit) => o.visitElements(visit), into, keys);
}

/**
 * The elements a request buffer holds from `at` on: how a transaction gives back the elements it
 * was handed as a stream (an iterable it encoded without keeping), for render() and error messages.
 * The request and a dump's reply share one format (native/README.md), so this is the dump's decoder.
 * Appended to `into`.
 */
export function decodeRequestElements(s: NftSet, buf: Uint8Array, at: number, count: number, into: SetElement[] = []): SetElement[] {
  return decodePlainElements(s, (visit) => new WireReader(buf).visit(at, count, visit), into);
}

function decodePlainElements(s: NftSet, visitAll: (visit: ElementVisitor) => void, out: SetElement[], keys?: string[]): SetElement[] {
  const key = s.key;
  const data = s.data;
  const dv = { buf: undefined as Uint8Array | undefined, view: undefined as DataView | undefined, bytes: undefined as Buffer | undefined };
  visitAll((buf, off, len, exprs) => {
    if (dv.buf !== buf) {
      dv.buf = buf;
      dv.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      dv.bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    }
    const view = dv.view!;
    // The identity elementKey() gives a plain set's element: its key bytes, one character each.
    if (keys) keys.push(off[ELEM_ATTR.KEY]! >= 0 ? dv.bytes!.toString('latin1', off[ELEM_ATTR.KEY]!, off[ELEM_ATTR.KEY]! + len[ELEM_ATTR.KEY]!) : '');
    let value: SetElement['value'];
    if (data === 'verdict') {
      if (off[ELEM_ATTR.VERDICT]! >= 0) {
        const code = view.getUint32(off[ELEM_ATTR.VERDICT]!, true);
        const chainAt = off[ELEM_ATTR.CHAIN]!;
        const chain = chainAt >= 0 ? cString(buf, chainAt, len[ELEM_ATTR.CHAIN]!) : undefined;
        value = verdictFromCode(code, chain);
      }
    } else if (data && off[ELEM_ATTR.DATA]! >= 0) {
      value = readValues(data, buf, off[ELEM_ATTR.DATA]!);
    }
    // One literal with both fields: the object gets its final shape at once (a property added
    // later costs a separate backing store per element; 120k of them at 10k services).
    const k = off[ELEM_ATTR.KEY]! >= 0 ? readValues(key, buf, off[ELEM_ATTR.KEY]!) : [];
    const e: SetElement = value === undefined ? { key: k } : { key: k, value };
    if (off[ELEM_ATTR.KEY_END]! >= 0) {
      const end = buf.subarray(off[ELEM_ATTR.KEY_END]!, off[ELEM_ATTR.KEY_END]! + len[ELEM_ATTR.KEY_END]!);
      const from = buf.subarray(off[ELEM_ATTR.KEY]!, off[ELEM_ATTR.KEY]! + len[ELEM_ATTR.KEY]!);
      if (!bytesEqual(from, end)) e.keyEnd = readValues(key, buf, off[ELEM_ATTR.KEY_END]!);
    }
    if (off[ELEM_ATTR.TIMEOUT]! >= 0) e.timeout = Number(view.getBigUint64(off[ELEM_ATTR.TIMEOUT]!, true));
    if (off[ELEM_ATTR.EXPIRATION]! >= 0) e.expires = Number(view.getBigUint64(off[ELEM_ATTR.EXPIRATION]!, true));
    if (off[ELEM_ATTR.USERDATA]! >= 0) {
      const comment = udataString(parseUdata(buf.subarray(off[ELEM_ATTR.USERDATA]!, off[ELEM_ATTR.USERDATA]! + len[ELEM_ATTR.USERDATA]!)).get(UDATA.SET_ELEM_COMMENT));
      if (comment !== undefined) e.comment = comment;
    }
    void exprs;
    out.push(e);
  });
  return out;
}

const cDecoder = new TextDecoder();
function cString(buf: Uint8Array, at: number, len: number): string {
  let end = at;
  while (end < at + len && buf[end] !== 0) end++;
  return cDecoder.decode(buf.subarray(at, end));
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function decodeRule(o: WireObject): Rule {
  const r: Rule = {
    family: familyOf(o),
    table: getStr(o.attrs, RULE_ATTR.TABLE) ?? '',
    chain: getStr(o.attrs, RULE_ATTR.CHAIN) ?? '',
    exprs: o.exprs.map(decodeExpr),
  };
  const comment = udataString(parseUdata(getBytes(o.attrs, RULE_ATTR.USERDATA)).get(UDATA.RULE_COMMENT));
  if (comment !== undefined) r.comment = comment;
  const handle = num(getU64(o.attrs, RULE_ATTR.HANDLE));
  if (handle !== undefined) r.handle = handle;
  return r;
}

/**
 * A chain or rule operation read back from the request it was encoded into, at `at` (where its one
 * message starts). A transaction keeps no other copy of these (Transaction.queue says which), so
 * this is how render() and error messages see them. The verb is in the message: NEWCHAIN with
 * NLM_F_EXCL is a create; NEWRULE with NLM_F_REPLACE a replace, with NLM_F_APPEND an add, else an
 * insert (as RequestEncoder writes them).
 */
export function decodeRequestOperation(buf: Uint8Array, at: number): Operation {
  const reader = new WireReader(buf);
  reader.pos = at;
  const o = reader.object(true);
  if (o.msgType === NFT_MSG.NEWCHAIN) return { verb: o.nlFlags & NLM_F.EXCL ? 'create' : 'add', kind: 'chain', chain: decodeChain(o) };
  if (o.msgType === NFT_MSG.NEWRULE) {
    const rule = decodeRule(o);
    const position = num(getU64(o.attrs, RULE_ATTR.POSITION));
    if (position !== undefined) rule.position = position;
    const verb = o.nlFlags & NLM_F.REPLACE ? 'replace' : o.nlFlags & NLM_F.APPEND ? 'add' : 'insert';
    return { verb, kind: 'rule', rule };
  }
  throw new Error(`nftlink: internal error: message type ${o.msgType} at byte ${at} of a request is not a chain or rule to read back`);
}

const setKey = (family: string, table: string, name: string): string => `${family}\0${table}\0${name}`;

/**
 * Decodes dump buffers from the addon, one or several (the objects of one generation, in any split:
 * Nftables.dump decodes one while the kernel produces the next). Anonymous sets move into the
 * lookups that bind them when finished.
 */
export class RulesetDecoder {
  private readonly out: Ruleset = { generation: 0, tables: [], chains: [], sets: [], rules: [] };
  private readonly sets = new Map<string, NftSet>();
  // Requests name anonymous sets "__set%d" and tell them apart by transaction id; dumps by name.
  private readonly byId = new Map<number, NftSet>();
  /** The first buffer's: the generation the decoded ruleset is of. */
  private generation: number | undefined;

  constructor(private readonly opts: { elementKeys?: boolean } = {}) {}

  /** Adds one buffer's objects; returns the generation it was dumped at. */
  add(buf: Uint8Array): number {
    // Each object decoded as soon as it is read (WireReader.object).
    const reader = new WireReader(buf);
    const { genid, count } = reader.header();
    this.generation ??= genid;
    const { out, sets, byId } = this;
    for (let i = 0; i < count; i++) {
      const o = reader.object(i === count - 1);
      switch (o.kind) {
        case WireKind.Table:
          out.tables.push(decodeTable(o));
          break;
        case WireKind.Chain:
          out.chains.push(decodeChain(o));
          break;
        case WireKind.Set: {
          const s = decodeSet(o);
          sets.set(setKey(s.family, s.table, s.name), s);
          const id = getU32(o.attrs, SET_ATTR.ID);
          if (id !== undefined) byId.set(id, s);
          out.sets.push(s);
          break;
        }
        case WireKind.Elements: {
          const family = familyOf(o);
          const id = getU32(o.attrs, SET_ATTR.ID);
          const s = (id !== undefined ? byId.get(id) : undefined) ?? sets.get(setKey(family, getStr(o.attrs, SET_ATTR.TABLE) ?? '', getStr(o.attrs, SET_ATTR.NAME) ?? ''));
          if (!s) break; // elements of a set that was not dumped (the dump raced a delete)
          const keyed = this.opts.elementKeys === true && !s.anonymous && !(s.flags ?? []).includes('interval');
          const keys = keyed ? (s.elementKeys ??= []) : undefined;
          decodeElementsOf(s, o, (s.elements ??= []), keys);
          break;
        }
        case WireKind.Rule:
          out.rules.push(decodeRule(o));
          break;
      }
    }
    return genid;
  }

  finish(): Ruleset {
    const { out, sets, byId } = this;
    out.generation = this.generation ?? 0;
    for (const r of out.rules) r.exprs = r.exprs.map((e) => attachInline(e, r, sets, byId));
    out.sets = out.sets.filter((s) => !s.anonymous);
    return out;
  }
}

/** Decodes one dump buffer from the addon (RulesetDecoder for several). */
export function decodeRuleset(buf: Uint8Array, opts: { elementKeys?: boolean } = {}): Ruleset {
  const d = new RulesetDecoder(opts);
  d.add(buf);
  return d.finish();
}

function attachInline(e: Expr, r: Rule, sets: Map<string, NftSet>, byId: Map<number, NftSet>): Expr {
  if (e.type !== 'lookup') return e;
  const s = (e.setId !== undefined ? byId.get(e.setId) : undefined) ?? sets.get(setKey(r.family, r.table, e.set));
  if (!s || !s.anonymous) return e;
  const { setId: _id, ...rest } = e;
  return { ...rest, inline: s };
}

/**
 * Decodes a one-set element dump (the reconciler's resync) against the set's declared types; the
 * elements are appended to `into` (a streamed dump's parts go into one array without copies).
 */
export function decodeSetElements(buf: Uint8Array, set: NftSet, into: SetElement[] = []): { generation: number; elements: SetElement[] } {
  const msg = new WireReader(buf).message();
  for (const o of msg.objects) {
    if (o.kind === WireKind.Elements) decodeElementsOf(set, o, into);
  }
  return { generation: msg.genid, elements: into };
}
