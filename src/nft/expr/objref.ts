import { NFT_OBJECT, type NftObjectType } from '../named-objects.js';
import { EXPR_ATTR } from '../netlink/attrs.js';
import { getStr, getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { required, type ExprCodec } from './codec.js';

/**
 * nft_objref: the rule uses a named stateful object (`counter name "c"`, `ct helper set "ftp"`),
 * named here, or picked from a map of objects by the key in `sreg` (`counter name ip saddr map @m`).
 */
export type ObjrefExpr =
  | { type: 'objref'; objectType: NftObjectType; name: string }
  | { type: 'objref'; objectType: NftObjectType; set: string; sreg: number };

const A = EXPR_ATTR.objref;
const TYPE_BY_NUMBER = new Map(Object.entries(NFT_OBJECT).map(([k, v]) => [v, k as NftObjectType]));

export const objrefCodec: ExprCodec<ObjrefExpr> = {
  type: 'objref',
  name: 'objref',
  encodeAttrs(w: WireWriter, e: ObjrefExpr): void {
    const code = NFT_OBJECT[e.objectType];
    if (code === undefined) throw new RangeError(`objref object type ${JSON.stringify(e.objectType)} is not one of: ${Object.keys(NFT_OBJECT).join(', ')}`);
    w.attrU32(A.IMM_TYPE, code);
    if ('name' in e) {
      if (typeof e.name !== 'string' || e.name.length === 0) throw new RangeError(`objref of a ${e.objectType} needs the object's name`);
      w.attrStr(A.IMM_NAME, e.name);
    } else {
      w.attrU32(A.SET_SREG, e.sreg);
      w.attrStr(A.SET_NAME, e.set);
    }
  },
  decode(x: WireExpr): ObjrefExpr {
    // The map form carries no type (the map's objects have it): counter, as a placeholder.
    const objectType = TYPE_BY_NUMBER.get(getU32(x.attrs, A.IMM_TYPE) ?? 0) ?? 'counter';
    const name = getStr(x.attrs, A.IMM_NAME);
    if (name !== undefined) return { type: 'objref', objectType, name };
    return { type: 'objref', objectType, set: required(getStr(x.attrs, A.SET_NAME), 'objref', 'set name'), sreg: required(getU32(x.attrs, A.SET_SREG), 'objref', 'set sreg') };
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
