// Checks made when an operation is queued, before anything reaches the kernel: the limits nf_tables
// enforces (names up to 255 bytes, comments up to 128) and references inside the batch.

import { NFT_COMMENT_MAXLEN, NFT_NAME_MAXLEN } from './netlink/constants.js';
import type { Expr } from './expr/index.js';
import type { NftSet } from './objects.js';
import { ownCode, type Datatype } from './types/datatypes.js';

// Buffer.byteLength counts UTF-8 bytes without encoding: these run for every queued operation.
// A string of n UTF-16 units has at most 3n UTF-8 bytes, so short ones (every name a proxy makes)
// need no count at all: no call into C++ for each of a cold start's 20k names.

/** UTF-8 bytes of `s`: its length while it is ASCII (names, comments and tags nearly always are). */
export function utf8Length(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8');
  return s.length;
}
const utf8AtMost = (s: string, max: number): boolean => s.length * 3 <= max || utf8Length(s) <= max;

export function checkName(kind: string, name: string): void {
  if (name.length === 0) throw new RangeError(`${kind} name is empty`);
  if (!utf8AtMost(name, NFT_NAME_MAXLEN - 1)) {
    throw new RangeError(`${kind} name "${name.slice(0, 40)}..." is ${utf8Length(name)} bytes; nf_tables allows ${NFT_NAME_MAXLEN - 1}`);
  }
  if (name.includes('\0')) throw new RangeError(`${kind} name contains a NUL byte`);
}

export function checkComment(kind: string, comment: string | undefined): void {
  if (comment === undefined) return;
  if (!utf8AtMost(comment, NFT_COMMENT_MAXLEN)) throw new RangeError(`${kind} comment is ${utf8Length(comment)} bytes; at most ${NFT_COMMENT_MAXLEN}`);
  if (comment.includes('"')) throw new RangeError(`${kind} comment contains a double quote, which nft text cannot carry`);
}

/** Bytes of a rule's tag (Rule.tag): with a comment of the most nft allows, within the kernel's 256 of userdata. */
export const RULE_TAG_MAXLEN = 64;

export function checkTag(r: { chain: string; tag?: string }): void {
  if (r.tag === undefined) return;
  if (!utf8AtMost(r.tag, RULE_TAG_MAXLEN)) throw new RangeError(`the tag of a rule of chain ${r.chain} is ${utf8Length(r.tag)} bytes; at most ${RULE_TAG_MAXLEN}`);
  if (r.tag.includes('\0')) throw new RangeError(`the tag of a rule of chain ${r.chain} contains a NUL byte`);
}

/** The text of a caller's value in an error: quoted when a string, as it is otherwise. */
const shown = (v: unknown): string => (typeof v === 'string' ? `"${v}"` : String(v));

/**
 * The number nf_tables has for a name (a family, a hook, a meta key...), or a RangeError that says
 * which names the field takes. TypeScript's types promise these names; this checks them for the
 * callers without (JavaScript, objects read from JSON), whose misspelt name would otherwise go out
 * as 0: hook 0 is prerouting.
 */
export function codeOf(table: Readonly<Record<string, number>>, name: unknown, what: string): number {
  const code = ownCode(table, name);
  if (code !== undefined) return code;
  throw new RangeError(`${what} ${shown(name)} is not one of: ${Object.keys(table).join(', ')}`);
}

/** Refuses a value that is not one of `names` (a chain's type or policy, a set flag), as codeOf does. */
export function checkOneOf(value: unknown, names: readonly string[], what: string): void {
  if (typeof value !== 'string' || !names.includes(value)) throw new RangeError(`${what} ${shown(value)} is not one of: ${names.join(', ')}`);
}

/** Refuses a value that is not an integer in [min, max] (a chain's priority). */
export function checkInteger(value: unknown, min: number, max: number, what: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${what} ${shown(value)} is not an integer from ${min} to ${max}`);
  }
}

/** Refuses a key or data that is not a non-empty list of data types (`types.ipv4_addr`, ...). */
export function checkDatatypes(list: unknown, what: string): void {
  if (!Array.isArray(list) || list.length === 0) throw new RangeError(`${what} is not a list of data types: ${shown(list)}`);
  list.forEach((t: unknown, i) => {
    const d = t as Partial<Datatype> | null;
    if (typeof d !== 'object' || d === null || typeof d.write !== 'function' || typeof d.size !== 'number' || typeof d.id !== 'number') {
      throw new RangeError(`${what} field ${i} is not a data type (${shown(t)}): use the library's types, such as types.ipv4_addr`);
    }
  });
}

/** Chains a rule's verdicts (immediates and inline verdict maps) jump or go to. */
export function jumpTargets(exprs: readonly Expr[]): string[] {
  const out: string[] = [];
  for (const e of exprs) {
    if (e.type === 'immediate' && e.verdict && (e.verdict.kind === 'jump' || e.verdict.kind === 'goto')) out.push(e.verdict.chain);
    if (e.type === 'lookup' && e.inline?.data === 'verdict') {
      for (const el of e.inline.elements ?? []) {
        const v = el.value;
        if (v && !Array.isArray(v) && 'kind' in v && (v.kind === 'jump' || v.kind === 'goto')) out.push(v.chain);
      }
    }
  }
  return out;
}

/** A typeof declaration must describe each part of the key (and data) it stands for, or nft lists nonsense. */
export function checkTypeof(set: NftSet): void {
  if (!set.typeof) return;
  const { key, data } = set.typeof;
  if (key.length !== set.key.length) {
    throw new RangeError(`set ${set.name}: typeof names ${key.length} key expression(s) for a ${set.key.length}-part key`);
  }
  if (data === undefined) return;
  if (!Array.isArray(set.data)) throw new RangeError(`set ${set.name}: typeof data given, but the set ${set.data === 'verdict' ? 'is a verdict map' : 'has no data'}`);
  if (data.length !== set.data.length) {
    throw new RangeError(`set ${set.name}: typeof names ${data.length} data expression(s) for ${set.data.length}-part data`);
  }
}
