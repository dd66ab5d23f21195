// An inline (anonymous) set's contents, compared. Two sets read with their elements compare by
// their text: types and the elements' kernel identities, sorted (the kernel returns them in hash
// order). The encoder also writes a digest of the set's elements into its userdata, so that a
// dump may leave the elements of such sets out (DumpOptions.anonymousElements) and their rules
// still compare, by digest. The kernel refuses element changes to an anonymous set once a rule
// binds it, so the digest written with the set stays true for its life. Changing the digest's
// form changes every digest: a process of the new form rewrites each such rule once, then finds
// them equal again.

import { hash } from 'node:crypto';
import type { NftSet, SetElement } from './objects.js';
import type { Datatype, Scalar } from './types/datatypes.js';
import { isVerdict } from './types/verdict.js';
import { elementKey } from './values.js';

function typesText(t: readonly Datatype[] | 'verdict' | undefined): string {
  if (t === undefined) return '';
  if (t === 'verdict') return 'verdict';
  return t.map((x) => `${x.name}/${x.size}`).join('.');
}

function elementText(set: NftSet, e: SetElement): string {
  let v = '';
  if (e.value !== undefined) v = Array.isArray(e.value) ? e.value.join(',') : JSON.stringify(e.value);
  return `${elementKey(set, e)}=${v}`;
}

/** The set's types and elements as text, elements sorted. */
export function inlineSetText(set: NftSet): string {
  const elements = (set.elements ?? []).map((e) => elementText(set, e)).sort();
  return `{${typesText(set.key)}:${typesText(set.data)}|${elements.join(';')}}`;
}

/** Bytes of the digest in the set's userdata. */
export const ELEMENTS_DIGEST_BYTES = 16;

const scalars = (v: readonly Scalar[]): string[] => v.map(String);

/**
 * An element as its digest spells it: its values as given (JSON, so that no value can run into the
 * next). Not inlineSetText's kernel identities: those parse every key into its interval's bytes,
 * five times the cost, and the digest is only ever compared with one made by this function from
 * the same code's objects.
 */
function digestText(e: SetElement): string {
  const v = e.value === undefined ? null : isVerdict(e.value) ? [e.value.kind, 'chain' in e.value ? e.value.chain : null] : scalars(e.value);
  return JSON.stringify([scalars(e.key), e.keyEnd === undefined ? null : scalars(e.keyEnd), v, e.comment ?? null, e.timeout ?? null]);
}

/**
 * The digest the encoder writes for this set's contents: the first 16 bytes of the SHA-256 of its
 * types and its elements, sorted, in hex. Always made from the elements (a set read back keeps the
 * digest it was written with in `elementsDigest`, which need not match elements changed since).
 */
export function elementsDigestOf(set: NftSet): string {
  const elements = (set.elements ?? []).map(digestText).sort();
  return hash('sha256', `${typesText(set.key)}:${typesText(set.data)}|${elements.join(';')}`, 'hex').slice(0, ELEMENTS_DIGEST_BYTES * 2);
}

/** Refuses an inline set read without its elements (a dump with anonymousElements: false): it cannot be written back. */
export function checkWritable(set: NftSet, chain: string): void {
  if (set.elements === undefined && set.elementsDigest !== undefined) {
    throw new RangeError(`a rule of chain ${chain} has an inline set read without its elements (a dump with anonymousElements: false): it cannot be written back`);
  }
}

/** What a set's contents are known by: the digest it was written with, or else one made from its elements. */
function knownDigest(set: NftSet): string {
  return set.elementsDigest ?? elementsDigestOf(set);
}

/**
 * Whether two inline sets hold the same: by their elements when both came with them, else by
 * digest (one of them was read without its elements).
 */
export function sameInlineSet(a: NftSet, b: NftSet): boolean {
  const bothRead = a.elements !== undefined && b.elements !== undefined;
  const neitherDigested = a.elementsDigest === undefined && b.elementsDigest === undefined;
  return bothRead || neitherDigested ? inlineSetText(a) === inlineSetText(b) : knownDigest(a) === knownDigest(b);
}
