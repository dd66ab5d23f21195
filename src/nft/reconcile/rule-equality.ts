// Two rules are the same when they run the same expressions with the same constants, and carry the
// same comment and tag. A rule read without its expressions compares by their digest
// (rule-digest.ts); the rest of this file compares expressions read back. What the kernel adds or
// renames is left out: counter values, the names and transaction ids of inline anonymous sets
// (whose contents are compared instead: inline-set.ts), the upper NAT registers and flags it fills
// in, and register numbers that name the same storage.
// Compared field by field, without building text: a restart at 10k services compares 10,000 rules
// read back against 10,000 built (as text this was an eighth of the restart), and rules nft's
// grammar cannot print compare too.

import type { Expr, LookupExpr, NatExpr } from '../expr/index.js';
import { NF_NAT_RANGE } from '../netlink/constants.js';
import { sameInlineSet } from '../inline-set.js';
import type { Chain, Rule } from '../objects.js';
import { exprsDigestOf } from '../rule-digest.js';
import { compareBytes } from '../values.js';

/**
 * A register as the 32-bit word it starts at: the kernel reports NFT_REG32_04 as NFT_REG_2 (the
 * same storage), so `meta l4proto` loaded into reg 12 dumps as reg 2.
 */
function word(reg: number): number {
  if (reg >= 1 && reg <= 4) return (reg - 1) * 4;
  if (reg >= 8 && reg <= 23) return reg - 8;
  return -1 - reg; // the verdict register, or nonsense: keep distinct
}

const REGISTER_FIELDS = new Set(['dreg', 'sreg', 'sregKey', 'sregData', 'regAddrMin', 'regAddrMax', 'regProtoMin', 'regProtoMax']);
const NO_SKIP: ReadonlySet<string> = new Set();
const LOOKUP_SKIP: ReadonlySet<string> = new Set(['set', 'setId', 'inline']);
const DYNSET_SKIP: ReadonlySet<string> = new Set(['exprs']);

/** Plain values: the same, or the same when written out (a decoded 5n is a built 5). */
function sameScalar(a: unknown, b: unknown): boolean {
  return a === b || (typeof a !== 'object' && typeof b !== 'object' && String(a) === String(b));
}

function sameValue(field: string, a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (b === undefined || b === null || a === null) return false;
  if (typeof a === 'number' && REGISTER_FIELDS.has(field)) return typeof b === 'number' && word(a) === word(b);
  if (a instanceof Uint8Array) return b instanceof Uint8Array && compareBytes(a, b) === 0;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x: unknown = a[i];
      const y: unknown = b[i];
      const same = typeof x === 'object' && x !== null ? typeof y === 'object' && y !== null && sameFields(x, y, NO_SKIP) : sameScalar(x, y);
      if (!same) return false;
    }
    return true;
  }
  if (typeof a === 'object') return typeof b === 'object' && sameFields(a, b, NO_SKIP);
  return sameScalar(a, b);
}

/** The same defined fields (those in `skip` aside), each the same value. */
function sameFields(a: object, b: object, skip: ReadonlySet<string>): boolean {
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let defined = 0;
  for (const k in ra) {
    const v = ra[k];
    if (v === undefined || skip.has(k)) continue;
    defined++;
    if (!sameValue(k, v, rb[k])) return false;
  }
  for (const k in rb) if (rb[k] !== undefined && !skip.has(k)) defined--;
  return defined === 0;
}

/** A register field as a word, or undefined when unset (a register of the verdict kind stays distinct). */
const wordOf = (reg: number | undefined): number | undefined => (reg === undefined ? undefined : word(reg));

/**
 * The kernel fills in what nft leaves implicit: the range's upper registers (the same as the
 * lower) and the MAP_IPS / PROTO_SPECIFIED flags. Compare what the rules mean, field by field
 * (no copies: a restart compares 10k of these).
 */
function sameNat(a: NatExpr, b: NatExpr): boolean {
  const upper = (min: number | undefined, max: number | undefined): number | undefined => (max === undefined || (min !== undefined && word(max) === word(min)) ? undefined : word(max));
  const implicit = NF_NAT_RANGE.MAP_IPS | NF_NAT_RANGE.PROTO_SPECIFIED;
  return (
    a.nat === b.nat &&
    a.family === b.family &&
    wordOf(a.regAddrMin) === wordOf(b.regAddrMin) &&
    wordOf(a.regProtoMin) === wordOf(b.regProtoMin) &&
    upper(a.regAddrMin, a.regAddrMax) === upper(b.regAddrMin, b.regAddrMax) &&
    upper(a.regProtoMin, a.regProtoMax) === upper(b.regProtoMin, b.regProtoMax) &&
    ((a.flags ?? 0) & ~implicit) === ((b.flags ?? 0) & ~implicit)
  );
}

function sameExprs(a: readonly Expr[], b: readonly Expr[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameExpr(a[i]!, b[i]!)) return false;
  return true;
}

export function sameExpr(a: Expr, b: Expr): boolean {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case 'counter':
      return true;
    case 'lookup': {
      const l = b as LookupExpr;
      if (a.inline || l.inline) {
        if (!a.inline || !l.inline || !sameInlineSet(a.inline, l.inline)) return false;
      } else if (a.set !== l.set) return false;
      return sameFields(a, l, LOOKUP_SKIP);
    }
    case 'nat':
      return sameNat(a, b as NatExpr);
    case 'dynset': {
      const d = b as typeof a;
      return sameExprs((a.exprs ?? []) as Expr[], (d.exprs ?? []) as Expr[]) && sameFields(a, d, DYNSET_SKIP);
    }
    default:
      return sameFields(a, b, NO_SKIP);
  }
}

/** What rules compare by. */
export type ComparedRule = Pick<Rule, 'exprs' | 'comment' | 'tag' | 'exprsDigest'>;

/**
 * The same comment and tag, and the same expressions: field by field when both came with them,
 * else by digest (one was read without them: rule-digest.ts). The other side's digest is made from
 * its expressions as the encoder writes them: compare such a rule with a rule as it would be
 * written, not with one read back whole (whose expressions carry what the kernel fills in).
 */
export function sameRule(a: ComparedRule, b: ComparedRule): boolean {
  if (a.comment !== b.comment || a.tag !== b.tag) return false;
  if (a.exprsDigest === undefined && b.exprsDigest === undefined) return sameExprs(a.exprs, b.exprs);
  return (a.exprsDigest ?? exprsDigestOf(a.exprs)) === (b.exprsDigest ?? exprsDigestOf(b.exprs));
}

/** The same rules in the same order. */
export function sameRules(a: readonly ComparedRule[], b: readonly ComparedRule[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameRule(a[i]!, b[i]!)) return false;
  return true;
}

/**
 * Whether two chains hook in the same way (both regular, or the same type, hook, priority and
 * policy): a chain whose base differs must be recreated, not just have its rules rewritten.
 */
export function sameChainBase(a: Chain, b: Chain): boolean {
  if (!a.base || !b.base) return !a.base && !b.base;
  return a.base.type === b.base.type && a.base.hook === b.base.hook && a.base.priority === b.base.priority && (a.base.policy ?? 'accept') === (b.base.policy ?? 'accept');
}
