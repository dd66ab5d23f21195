// Elements as the fake keeps them: by identity (the key's bytes, elementKey), with their values
// spelt as a kernel dump decodes them, and their data comparable (a clash is other data).

import type { NftSet, SetElement } from '../nft/index.js';
import { decodeValues, elementKey, encodeValues, valuesKey } from '../nft/values.js';

const isInterval = (s: NftSet): boolean => s.anonymous === true || (s.flags ?? []).includes('interval');

/** The element's identity in the set; throws a RangeError for a key that does not fit the set's types. */
export const identityOf = (s: NftSet, e: SetElement): string => elementKey(s, e);

/** What the element's data is, to compare: '' for none. */
export function dataOf(s: NftSet, e: SetElement): string {
  const v = e.value;
  if (v === undefined) return '';
  if (!Array.isArray(v)) return 'chain' in v ? `${v.kind} ${v.chain}` : v.kind;
  return Array.isArray(s.data) ? valuesKey(s.data, v, `map ${s.name}`) : '?';
}

/**
 * The element as a dump reads it back: keys and data in the spelling the types decode to (an
 * interval set's ranges stay as given).
 */
export function storedElement(s: NftSet, e: SetElement): SetElement {
  const out: SetElement = { key: isInterval(s) ? [...e.key] : decodeValues(s.key, encodeValues(s.key, e.key, `set ${s.name}`)) };
  if (e.keyEnd !== undefined) out.keyEnd = [...e.keyEnd];
  const v = e.value;
  if (v !== undefined) out.value = Array.isArray(v) && Array.isArray(s.data) ? decodeValues(s.data, encodeValues(s.data, v, `map ${s.name}`)) : v;
  if (e.timeout !== undefined) out.timeout = e.timeout;
  if (e.comment !== undefined) out.comment = e.comment;
  return out;
}
