// Elements as the fake keeps them: by identity (the key's bytes, elementKey), with their values
// spelt as a kernel dump decodes them, and their data comparable (a clash is other data).

import { isVerdict, type NftSet, type SetElement } from '../nft/index.js';
import { compareBytes, decodeValues, elementKey, encodeValues, parseIntervalValue, valuesKey, type ByteRange } from '../nft/values.js';

const isInterval = (s: NftSet): boolean => s.anonymous === true || (s.flags ?? []).includes('interval');

/**
 * The element's identity in the set and the element as the fake keeps it, or undefined where the
 * kernel answers EINVAL: a key or data that does not fit the set's types, data missing in a map or
 * given to a set, a verdict where the map holds values or the other way round.
 */
export function fitted(s: NftSet, e: SetElement): { id: string; element: SetElement } | undefined {
  const v = e.value;
  // A map of named objects: the value is the object's name (whether it exists is the caller's).
  if (s.objects !== undefined) return Array.isArray(v) && typeof v[0] === 'string' && v.length === 1 ? keyedAs(s, e) : undefined;
  if ((s.data === undefined) !== (v === undefined)) return undefined;
  if (v !== undefined && (s.data === 'verdict') === Array.isArray(v)) return undefined;
  return keyedAs(s, e);
}

/** The element's identity and stored form, or undefined for a key or data that does not fit. */
function keyedAs(s: NftSet, e: SetElement): { id: string; element: SetElement } | undefined {
  const id = identityOf(s, e);
  if (id === undefined) return undefined;
  try {
    return { id, element: storedElement(s, e) };
  } catch {
    return undefined;
  }
}

/** The element's identity in the set (its data aside), or undefined for a key that does not fit. */
export function identityOf(s: NftSet, e: Pick<SetElement, 'key' | 'keyEnd'>): string | undefined {
  try {
    return elementKey(s, e);
  } catch {
    return undefined;
  }
}

/**
 * Whether the element's range meets one of the set's elements, in every field of its key: the
 * ranges of an interval set do not overlap, and the kernel refuses such an element (EEXIST).
 * `e` and the held elements fit the set (fitted()); only named interval sets are checked (an inline
 * set's ranges are merged by the encoder).
 */
export function overlapsHeld(s: NftSet, held: Iterable<SetElement>, e: SetElement): boolean {
  if (s.anonymous || !(s.flags ?? []).includes('interval')) return false;
  const mine = fieldRanges(s, e);
  for (const other of held) {
    const theirs = fieldRanges(s, other);
    if (mine.every((r, i) => compareBytes(r.from, theirs[i]!.to) <= 0 && compareBytes(theirs[i]!.from, r.to) <= 0)) return true;
  }
  return false;
}

const fieldRanges = (s: NftSet, e: SetElement): ByteRange[] => s.key.map((t, i) => parseIntervalValue(t, e.key[i]!, e.keyEnd?.[i], `set ${s.name}`));

/** What the element's data is, to compare: '' for none. */
export function dataOf(s: NftSet, e: SetElement): string {
  const v = e.value;
  if (v === undefined) return '';
  if (isVerdict(v)) return 'chain' in v ? `${v.kind} ${v.chain}` : v.kind;
  return Array.isArray(s.data) ? valuesKey(s.data, v, `map ${s.name}`) : '?';
}

/**
 * The element as a dump reads it back: keys and data in the spelling the types decode to (an
 * interval set's ranges stay as given).
 */
function storedElement(s: NftSet, e: SetElement): SetElement {
  const out: SetElement = { key: isInterval(s) ? [...e.key] : decodeValues(s.key, encodeValues(s.key, e.key, `set ${s.name}`)) };
  if (e.keyEnd !== undefined) out.keyEnd = [...e.keyEnd];
  const v = e.value;
  if (v !== undefined) out.value = Array.isArray(v) && Array.isArray(s.data) ? decodeValues(s.data, encodeValues(s.data, v, `map ${s.name}`)) : v;
  if (e.timeout !== undefined) out.timeout = e.timeout;
  if (e.comment !== undefined) out.comment = e.comment;
  return out;
}
