// A set's message: NEWSET with its types, flags and nft's userdata, followed by its elements when
// the set brings them; a flush is a DELSETELEM without elements.

import { SET_FLAGS, SET_POLICIES, type NftSet } from '../../objects.js';
import type { Verb } from '../../operations.js';
import { typeIdOf, type Datatype } from '../../types/datatypes.js';
import { typeofUdata, verdictTypeofUdata } from '../../types/typeof.js';
import { NFT_OBJECT } from '../../named-objects.js';
import { checkDatatypes, checkOneOf, codeOf } from '../../validate.js';
import { SET_ATTR, UDATA } from '../attrs.js';
import { NFT_DATA_VERDICT, NFT_MSG, NFT_SET_F } from '../constants.js';
import { UdataBuilder } from '../udata.js';
import { WireKind } from '../wire-format.js';
import { encodeElements, setReference } from './elements.js';
import { hasRangeSyntax } from '../../values.js';
import { createFlags, noExprs, type MessageWriter } from './message-writer.js';

/** EXPR_CONCAT in nft's enum expr_types: what nft 1.0.6 writes as the typeof of a `type a . b` key. */
const NFT_EXPR_CONCAT = 13;

/** Returns the set's transaction id (0 for a flush). */
export function encodeSet(m: MessageWriter, verb: Verb, s: NftSet): number {
  if (verb === 'flush') {
    m.begin(NFT_MSG.DELSETELEM, WireKind.Elements, 0, s.family);
    setReference(m.w, s, undefined);
    noExprs(m.w);
    m.w.u32(0);
    return 0;
  }
  const msg = verb === 'delete' ? NFT_MSG.DELSET : verb === 'destroy' ? NFT_MSG.DESTROYSET : NFT_MSG.NEWSET;
  m.begin(msg, WireKind.Set, createFlags(verb), s.family);
  const w = m.w;
  const id = m.takeSetId();
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
    if (s.objects !== undefined) w.attrU32(SET_ATTR.OBJ_TYPE, objectTypeCode(s));
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
  noExprs(w);
  if (msg === NFT_MSG.NEWSET && s.elements?.length) encodeElements(m, 'add', s, s.elements, id);
  return id;
}

export function setFlags(s: NftSet): number {
  let f = 0;
  const flags = s.flags ?? [];
  if (s.anonymous) f |= NFT_SET_F.anonymous | NFT_SET_F.constant;
  if (flags.includes('constant')) f |= NFT_SET_F.constant;
  const interval = flags.includes('interval') || (s.anonymous === true && (s.elements ?? []).some((e) => hasRangeSyntax(s, e)));
  if (interval) f |= NFT_SET_F.interval;
  if (s.data) f |= NFT_SET_F.map;
  if (s.objects !== undefined) f |= NFT_SET_F.object;
  if (flags.includes('timeout') || s.timeout !== undefined) f |= NFT_SET_F.timeout;
  if (flags.includes('dynamic')) f |= NFT_SET_F.eval;
  if (interval && s.key.length > 1) f |= NFT_SET_F.concat;
  return f;
}

/** A map of objects' NFT_OBJECT_* type, or a RangeError naming the types there are. */
function objectTypeCode(s: NftSet): number {
  if (s.data !== undefined) throw new RangeError(`map ${s.name} has both data and objects; a map holds one or the other`);
  return codeOf(NFT_OBJECT, s.objects, `map ${s.name} objects`);
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
  if (s.anonymous && s.elementsDigest !== undefined) u.raw(UDATA.SET_ELEMENTS_DIGEST, Buffer.from(s.elementsDigest, 'hex'));
  return u.bytes();
}

