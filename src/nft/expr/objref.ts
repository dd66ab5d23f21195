import { NFT_OBJECT, type NftObjectType } from '../named-objects.js';
import { EXPR_ATTR } from '../netlink/attrs.js';
import { getStr, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { required, type ExprCodec } from './codec.js';

/**
 * nft_objref: the rule uses a named stateful object (`counter name "c"`, `ct helper set "ftp"`),
 * named here, or picked from a map of objects by the key in `sreg` (`counter name ip saddr map @m`).
 * `objectType` is absent when read back from the map form (the kernel takes the type from the
 * map, and nftlink does not model maps of objects) or for a type nftlink does not model (tunnel);
 * such an expression re-encodes unchanged but has no nft text.
 */
export type ObjrefExpr =
  | { type: 'objref'; objectType?: NftObjectType; name: string; /** The NFT_OBJECT_* number of a type nftlink does not model, kept to re-encode. */ typeCode?: number }
  | { type: 'objref'; objectType?: NftObjectType; set: string; sreg: number };

const A = EXPR_ATTR.objref;
const TYPE_BY_NUMBER = new Map(Object.entries(NFT_OBJECT).map(([k, v]) => [v, k as NftObjectType]));

export const objrefCodec: ExprCodec<ObjrefExpr> = {
  type: 'objref',
  name: 'objref',
  encodeAttrs(w: WireWriter, e: ObjrefExpr): void {
    if ('name' in e) {
      const code = e.objectType === undefined ? e.typeCode : NFT_OBJECT[e.objectType];
      if (code === undefined) throw new RangeError(`objref object type ${JSON.stringify(e.objectType)} is not one of: ${Object.keys(NFT_OBJECT).join(', ')}`);
      w.attrU32(A.IMM_TYPE, code);
      if (typeof e.name !== 'string' || e.name.length === 0) throw new RangeError(`objref of a ${e.objectType} needs the object's name`);
      w.attrStr(A.IMM_NAME, e.name);
    } else {
      w.attrU32(A.SET_SREG, e.sreg);
      w.attrStr(A.SET_NAME, e.set);
    }
  },
  decode(x: WireExpr): ObjrefExpr {
    const code = getU32(x.attrs, A.IMM_TYPE);
    const objectType = TYPE_BY_NUMBER.get(code ?? 0);
    const name = getStr(x.attrs, A.IMM_NAME);
    if (name !== undefined) {
      if (objectType !== undefined) return { type: 'objref', objectType, name };
      return code === undefined ? { type: 'objref', name } : { type: 'objref', name, typeCode: code };
    }
    const e: ObjrefExpr = { type: 'objref', set: required(getStr(x.attrs, A.SET_NAME), 'objref', 'set name'), sreg: required(getU32(x.attrs, A.SET_SREG), 'objref', 'set sreg') };
    if (objectType !== undefined) e.objectType = objectType;
    return e;
  },
};

/** How nft writes a reference to an object of each type: `counter name "c"`, `ct helper set "h"`. */
export const OBJREF_KEYWORDS: Readonly<Record<NftObjectType, string>> = {
  counter: 'counter name',
  quota: 'quota name',
  limit: 'limit name',
  'ct helper': 'ct helper set',
  'ct timeout': 'ct timeout set',
  'ct expectation': 'ct expectation set',
  synproxy: 'synproxy name',
  secmark: 'meta secmark set',
};
