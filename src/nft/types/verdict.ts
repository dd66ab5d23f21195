// Verdicts: what immediate expressions and verdict-map elements carry.

import { VERDICT_CODE } from '../netlink/constants.js';
import type { Scalar } from './datatypes.js';

export type Verdict =
  | { kind: 'accept' | 'drop' | 'return' | 'continue' }
  | { kind: 'jump' | 'goto'; chain: string };

export type VerdictKind = Verdict['kind'];

/** A map element's value is a verdict or a list of data (Array.isArray does not narrow a readonly list away). */
export function isVerdict(v: readonly Scalar[] | Verdict): v is Verdict {
  return !Array.isArray(v);
}

const KIND_BY_CODE = new Map<number, VerdictKind>(
  (Object.entries(VERDICT_CODE) as [string, number][])
    .filter(([k]) => k !== 'break')
    .map(([k, v]) => [v, k as VerdictKind]),
);

/** The kernel's code of a verdict; a kind it does not know is refused (a JS caller's typo would otherwise be sent as 0, NF_DROP). */
export function verdictCode(v: Verdict): number {
  // A switch, not a lookup with Object.hasOwn: this runs for every element of a dispatch map, and
  // compares interned strings by pointer where hasOwn is a builtin call (Node 20).
  switch (v.kind) {
    case 'goto':
      return VERDICT_CODE.goto;
    case 'jump':
      return VERDICT_CODE.jump;
    case 'accept':
      return VERDICT_CODE.accept;
    case 'drop':
      return VERDICT_CODE.drop;
    case 'return':
      return VERDICT_CODE.return;
    case 'continue':
      return VERDICT_CODE.continue;
    default:
      throw new RangeError(`unknown verdict ${JSON.stringify((v as { kind: unknown }).kind)} (accept, drop, return, continue, jump, goto)`);
  }
}

export function verdictFromCode(code: number, chain: string | undefined): Verdict {
  const kind = KIND_BY_CODE.get(code >>> 0);
  if (!kind) throw new Error(`nftlink: unknown verdict code ${code | 0}`);
  if (kind === 'jump' || kind === 'goto') {
    if (chain === undefined) throw new Error(`nftlink: ${kind} verdict without a chain`);
    return { kind, chain };
  }
  return { kind };
}

export function renderVerdict(v: Verdict): string {
  return v.kind === 'jump' || v.kind === 'goto' ? `${v.kind} ${quoteName(v.chain)}` : v.kind;
}

/**
 * Names print bare, as nft lists them. A name that is not an identifier (or that nft reserves as a
 * keyword, such as `fwd`) cannot be written in nft 1.0.6's syntax at all: it rejects quoted names.
 * Newer nft accepts them quoted, so those are quoted. The netlink path has no such limits.
 */
export function quoteName(name: string): string {
  return /^[a-zA-Z_][a-zA-Z0-9_./-]*$/.test(name) ? name : JSON.stringify(name);
}
