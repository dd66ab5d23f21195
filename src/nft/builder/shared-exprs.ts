// One frozen object for each of the expressions that recur in rule after rule (`meta l4proto`,
// `cmp eq 6`, a payload load, a `numgen`, a lookup in a named map, the DNAT of a map's
// `addr . port`). A proxy keeps its rules for as long as their services live, and at 10k services
// these repeats were 3.7 MB of identical objects. The encoder writes each frozen expression once
// and copies its bytes after (encodeExpr): a service's DNAT rule through a shared endpoint map is
// then all copies, 9.5% less CPU for 10k of them cold (Node 20).
// Frozen, so that a caller changing one by mistake gets an error instead of changing every rule.
//
// Found by two keys, numbers and interned strings, not by one string made per expression: making
// and hashing that string for each of the 50,000 expressions of a 10k-service load was the
// builder's largest cost in a cold process.

import type { Expr } from '../expr/index.js';
import { NFT_CMP, NFT_PAYLOAD_BASE } from '../netlink/constants.js';

/** At most this many shared objects (a table of 10k services' own addresses would not repeat). */
const SHARED_MAX = 4096;
let sharedCount = 0;

/** For one expression type: first key -> second key -> the shared expression. */
type SharedOfType = Map<number, Map<number | string, Expr>>;
const metas: SharedOfType = new Map();
const payloads: SharedOfType = new Map();
const cmps: SharedOfType = new Map();
const numgens: SharedOfType = new Map();
const lookups: SharedOfType = new Map();
const nats: SharedOfType = new Map();

function intern(ofType: SharedOfType, k1: number, k2: number | string, e: Expr): Expr {
  let second = ofType.get(k1);
  if (!second) ofType.set(k1, (second = new Map()));
  const known = second.get(k2);
  if (known) return known;
  if (sharedCount >= SHARED_MAX) return e;
  sharedCount++;
  second.set(k2, Object.freeze(e));
  return e;
}

/** Up to 4 bytes as one number (a length, since [0] and [0, 0] differ), or undefined for more. */
function shortBytes(data: Uint8Array): number | undefined {
  if (data.length > 4) return undefined;
  let n = data.length;
  for (let i = 0; i < data.length; i++) n = n * 256 + data[i]!;
  return n;
}

/** The two keys of the expression tableFor() last placed (module-wide: no object per call). */
let key1 = 0;
let key2: number | string = 0;

/** The table an expression of this kind is shared in (its keys in key1, key2), or undefined. */
function tableFor(e: Expr): SharedOfType | undefined {
  switch (e.type) {
    case 'meta':
      if (e.sreg !== undefined || e.dreg === undefined) return undefined;
      key1 = e.dreg;
      key2 = e.key;
      return metas;
    case 'payload':
      if (e.sreg !== undefined || e.dreg === undefined) return undefined;
      key1 = e.dreg * 4 + NFT_PAYLOAD_BASE[e.base];
      key2 = e.offset * 256 + e.len;
      return payloads;
    case 'cmp': {
      const data = shortBytes(e.data);
      if (data === undefined) return undefined;
      key1 = e.sreg * 8 + NFT_CMP[e.op];
      key2 = data;
      return cmps;
    }
    case 'numgen':
      key1 = (e.modulus * 32 + e.dreg) * 2 + (e.mode === 'inc' ? 1 : 0);
      // An offset of 0 and none encode alike but compare differently (rule equality): kept apart.
      key2 = e.offset ?? -1;
      return numgens;
    case 'lookup':
      // Inline sets and transaction ids belong to one rule.
      if (e.inline !== undefined || e.setId !== undefined) return undefined;
      key1 = ((e.dreg ?? 255) * 256 + e.sreg) * 2 + (e.invert === true ? 1 : 0);
      key2 = e.set;
      return lookups;
    case 'nat':
      if (e.regAddrMin === undefined || e.regProtoMin === undefined || e.regAddrMax !== undefined || e.regProtoMax !== undefined || e.flags !== undefined) return undefined;
      key1 = e.regAddrMin * 256 + e.regProtoMin;
      key2 = (e.nat === 'dnat' ? 2 : 0) + (e.family === 'ip' ? 1 : 0);
      return nats;
    default:
      return undefined;
  }
}

/**
 * The shared object equal to `e`, or `e` itself (now shared, or of a kind that is not). One call
 * of intern() for every kind: V8 compiles its map lookups once, not once per kind.
 */
export function shared(e: Expr): Expr {
  const table = tableFor(e);
  return table === undefined ? e : intern(table, key1, key2, e);
}
