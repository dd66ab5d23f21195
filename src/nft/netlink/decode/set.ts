// A dumped set -> NftSet: its types (with the byte order and `typeof` nft keeps in the userdata),
// flags and properties. Its elements are decoded by elements.ts.

import { ELEMENTS_DIGEST_BYTES } from '../../inline-set.js';
import { NFT_OBJECT, type NftObjectType } from '../../named-objects.js';
import type { NftSet, SetFlag } from '../../objects.js';
import { integer, typesFromId, type Datatype } from '../../types/datatypes.js';
import { parseTypeof } from '../../types/typeof.js';
import { SET_ATTR, UDATA } from '../attrs.js';
import { NFT_DATA_VERDICT, NFT_SET_F } from '../constants.js';
import { parseUdata, udataString, udataU32 } from '../udata.js';
import { getBytes, getStr, getU32, getU64Number } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

/**
 * A plain `integer` key has no byte order of its own: nft records it in the userdata (an interval
 * map keyed by `numgen inc` stores network-order keys, converted by a byteorder expression).
 */
function withByteorder(types: Datatype[], order: number | undefined): Datatype[] {
  if (types.length !== 1 || types[0]!.name !== 'integer' || order !== 2) return types;
  return [integer(types[0]!.size, 'big')];
}

const OBJECT_TYPE_BY_NUMBER = new Map(Object.entries(NFT_OBJECT).map(([k, v]) => [v, k as NftObjectType]));

export function decodeSet(o: WireObject): NftSet {
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
  if (flags & NFT_SET_F.object) {
    const objects = OBJECT_TYPE_BY_NUMBER.get(getU32(o.attrs, SET_ATTR.OBJ_TYPE) ?? 0);
    if (objects !== undefined) s.objects = objects;
  }
  // The order nft lists them in: constant, dynamic, interval, timeout.
  const fl: SetFlag[] = [];
  if (flags & NFT_SET_F.anonymous) s.anonymous = true;
  else if (flags & NFT_SET_F.constant) fl.push('constant');
  if (flags & NFT_SET_F.eval) fl.push('dynamic');
  if (flags & NFT_SET_F.interval) fl.push('interval');
  if (flags & NFT_SET_F.timeout) fl.push('timeout');
  if (fl.length) s.flags = fl;
  const timeout = getU64Number(o.attrs, SET_ATTR.TIMEOUT);
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
  const digest = udata.get(UDATA.SET_ELEMENTS_DIGEST);
  if (s.anonymous && digest?.length === ELEMENTS_DIGEST_BYTES) s.elementsDigest = Buffer.from(digest.buffer, digest.byteOffset, digest.length).toString('hex');
  const handle = getU64Number(o.attrs, SET_ATTR.HANDLE);
  if (handle !== undefined) s.handle = handle;
  return s;
}
