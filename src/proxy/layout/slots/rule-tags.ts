// What the slots layout learns back from its rules on a restart (SlotsLayout.adopt), kept in each
// rule's tag (Rule.tag) as well as in its expressions. The sync reads its table without the rules'
// expressions (DumpOptions.ruleExprs: decoding 10k service rules was most of a restart's dump), and
// the tags still say which slots each service chain holds and which pin id it pins by. Rules
// without a tag (a table written by `nft -f`, or before tags) are read from their expressions.
//
//   slot B M N   the pick rule: bucket map B, member range M (slots M * SLOTS_PER_CHAIN on), N endpoints
//   pin I B      the pinned rule of an affinity chain: pin id I, pins map B (affinity.ts pinsMapOf)
//
// A tag that does not match the rule's expressions does no harm beyond a rewrite: the rules built
// from the adopted state are compared with the kernel's by their expressions' digest.

import type { Rule } from '../../../nft/index.js';
import { pins, slotMap } from '../names.js';
import { PIN_ID } from './affinity.js';
import { SLOTS_PER_CHAIN } from './allocator.js';

export interface SlotRange {
  bucket: number;
  member: number;
  endpoints: number;
}

export interface PinRef {
  id: number;
  bucket: number;
}

export const slotTag = (r: SlotRange): string => `slot ${r.bucket} ${r.member} ${r.endpoints}`;
export const pinTag = (p: PinRef): string => `pin ${p.id} ${p.bucket}`;

/** The tag's numbers after `word`, if it is such a tag. */
function tagged(tag: string | undefined, word: string, count: number): number[] | undefined {
  if (tag === undefined || !tag.startsWith(word + ' ')) return undefined;
  const parts = tag.slice(word.length + 1).split(' ').map(Number);
  return parts.length === count && parts.every((n) => Number.isSafeInteger(n) && n >= 0) ? parts : undefined;
}

/** The slots a pick rule takes: from its tag, else from `numgen ... offset ... map @endpoints-B`. */
export function slotRangeOf(r: Rule): SlotRange | undefined {
  const t = tagged(r.tag, 'slot', 3);
  if (t) return { bucket: t[0]!, member: t[1]!, endpoints: t[2]! };
  const i = r.exprs.findIndex((e) => e.type === 'numgen');
  const ng = r.exprs[i];
  const lookup = r.exprs[i + 1];
  if (ng?.type !== 'numgen' || lookup?.type !== 'lookup') return undefined;
  const bucket = slotMap.bucket(lookup.set);
  const base = ng.offset ?? 0;
  if (bucket === undefined || base % SLOTS_PER_CHAIN !== 0) return undefined;
  return { bucket, member: base / SLOTS_PER_CHAIN, endpoints: ng.modulus };
}

/** The pin an affinity chain's pinned rule looks up: from its tag, else from `ip saddr . <id> map @pins-B`. */
export function pinOf(r: Rule): PinRef | undefined {
  const t = tagged(r.tag, 'pin', 2);
  if (t) return { id: t[0]!, bucket: t[1]! };
  const k = r.exprs.findIndex((e) => e.type === 'lookup' && pins.bucket(e.set) !== undefined);
  const idLoad = r.exprs[k - 1];
  const pinSet = r.exprs[k];
  if (pinSet?.type !== 'lookup' || idLoad?.type !== 'immediate' || !idLoad.data) return undefined;
  return { id: Number(PIN_ID.toValue(idLoad.data)), bucket: pins.bucket(pinSet.set)! };
}
