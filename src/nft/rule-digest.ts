// A rule's expressions as one number, which the encoder writes into the rule's userdata
// (encode/rule.ts), so that a dump may leave the expressions out (DumpOptions.ruleExprs) and the
// rule still compares (sameRule). Decoding every rule's expressions is most of what a restart's
// dump costs in JavaScript, and their objects outlive it.
//
// The number is the hash (byte-hash.ts) of the expressions as the encoder writes them, less what
// names a set for one transaction only: a lookup's or dynset's transaction id, and an inline set's
// generated name (the set is known by its elements digest instead, inline-set.ts). The kernel
// keeps userdata as written and never changes a rule in place (a replace brings its own userdata),
// so the digest stays true for the rule's life. One thing it cannot see: a chain someone renames
// keeps the rules that jump to it, which then dump the new name under the old digest. Changing
// what the digest covers changes every digest: a process of the new form rewrites each rule once.

import { hashBytes } from './byte-hash.js';
import { encodeExpr, type Expr } from './expr/index.js';
import { elementsDigestOf } from './inline-set.js';
import { WireWriter } from './netlink/encode/wire-writer.js';

/** Bytes of the digest in the rule's userdata: the number as a little-endian u64. */
export const EXPRS_DIGEST_BYTES = 8;

const scratch = new WireWriter(1024);

/**
 * Whether the encoder's bytes for these expressions are the digest's own: nothing in them names a
 * set for one transaction (encode/rule.ts then hashes what it wrote, instead of encoding twice).
 */
export function digestsAsEncoded(exprs: readonly Expr[]): boolean {
  for (let i = 0; i < exprs.length; i++) {
    const e = exprs[i]!;
    if ((e.type === 'lookup' && (e.inline !== undefined || e.setId !== undefined)) || (e.type === 'dynset' && e.setId !== undefined)) return false;
  }
  return true;
}

/** The expression as the digest covers it: sets by name (an inline one by its elements), no transaction ids. */
function asDigested(e: Expr): Expr {
  if (e.type === 'lookup' && e.inline !== undefined) {
    const { setId: _id, inline, ...rest } = e;
    return { ...rest, set: `{${inline.elementsDigest ?? elementsDigestOf(inline)}}` };
  }
  if ((e.type === 'lookup' || e.type === 'dynset') && e.setId !== undefined) {
    const { setId: _id, ...rest } = e;
    return rest;
  }
  return e;
}

/** The expression list's bytes from `from` to `to` of an encoder's buffer, hashed. */
export function digestOfEncoded(bytes: Uint8Array, from: number, to: number): number {
  return hashBytes(bytes, from, to);
}

/** The digest of a rule's expressions, as the encoder writes it into the rule. */
export function exprsDigestOf(exprs: readonly Expr[]): number {
  const w = scratch;
  w.reset(0);
  w.openList();
  for (let i = 0; i < exprs.length; i++) encodeExpr(w, asDigested(exprs[i]!));
  w.closeList();
  return digestOfEncoded(w.bytes, 0, w.length);
}

/** Writes the digest as the rule's userdata holds it: a little-endian u64 (the number is below 2^53). */
export function writeDigest(b: Uint8Array, at: number, digest: number): void {
  const low = digest % 0x100000000;
  const high = (digest - low) / 0x100000000;
  for (let i = 0; i < 4; i++) {
    b[at + i] = (low >>> (8 * i)) & 0xff;
    b[at + 4 + i] = (high >>> (8 * i)) & 0xff;
  }
}

/** Reads a digest writeDigest wrote. */
export function readDigest(b: Uint8Array): number {
  const low = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  const high = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
  return high * 0x100000000 + low;
}

/** Refuses a rule read without its expressions (a dump with ruleExprs: false): it cannot be written back. */
export function checkRuleWritable(r: { chain: string; exprsDigest?: number }): void {
  if (r.exprsDigest !== undefined) {
    throw new RangeError(`a rule of chain ${r.chain} was read without its expressions (a dump with ruleExprs: false): it cannot be written back`);
  }
}
