// Checks made when an operation is queued, before anything reaches the kernel: the limits nf_tables
// enforces (names up to 255 bytes, comments up to 128) and references inside the batch.

import { NFT_COMMENT_MAXLEN, NFT_NAME_MAXLEN } from './netlink/constants.js';
import type { Expr } from './expr/index.js';
import type { NftSet } from './objects.js';

// Buffer.byteLength counts UTF-8 bytes without encoding: these run for every queued operation.
// A string of n UTF-16 units has at most 3n UTF-8 bytes, so short ones (every name a proxy makes)
// need no count at all: no call into C++ for each of a cold start's 20k names.
const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');
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
