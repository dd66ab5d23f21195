// An inline (anonymous) set's contents as one comparable value: its types and its elements, sorted
// (the kernel returns them in hash order). Rules compare their inline sets by this text; the
// encoder writes its digest into the set's userdata, so that a dump may leave the elements of
// such sets out (DumpOptions.anonymousElements) and the rules still compare. The kernel refuses
// element changes to an anonymous set once a rule binds it, so the digest written with the set
// stays true for its life. Changing this text's form changes every digest: a process of the new
// form rewrites each such rule once, then finds them equal again.

import { hash } from 'node:crypto';
import type { NftSet, SetElement } from './objects.js';
import type { Datatype } from './types/datatypes.js';
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

/**
 * The digest of the set's contents: the first 16 bytes of the SHA-256 of its text, in hex. A
 * set read without its elements (a dump that left them out) gives the digest it was written with.
 */
export function inlineSetDigest(set: NftSet): string {
  if (set.elements === undefined && set.elementsDigest !== undefined) return set.elementsDigest;
  return hash('sha256', inlineSetText(set), 'hex').slice(0, ELEMENTS_DIGEST_BYTES * 2);
}

/**
 * Whether two inline sets hold the same: by text when both came with their elements, else by
 * digest (one of them was read without its elements).
 */
export function sameInlineSet(a: NftSet, b: NftSet): boolean {
  if (a.elementsDigest === undefined && b.elementsDigest === undefined) return inlineSetText(a) === inlineSetText(b);
  if (a.elements !== undefined && b.elements !== undefined) return inlineSetText(a) === inlineSetText(b);
  return inlineSetDigest(a) === inlineSetDigest(b);
}
