// What is known of a chain in the kernel, and the smallest change that turns it into the desired
// chain: nothing, its one rule replaced by handle, or a flush followed by the rules. The library's
// Reconciler and the proxy's sync planner both decide chain writes here.

import type { Chain, Rule } from '../objects.js';
import { sameChainBase, sameRules } from './rule-equality.js';

export interface KnownChain {
  chain: Chain;
  rules: readonly Rule[];
  /** The kernel's handles of the rules, when known (a dump, or the echo of a write). */
  handles?: (number | undefined)[];
}

/** A chain with these rules; their handles are kept when every rule has one (a dump's). */
export function knownChain(chain: Chain, rules: readonly Rule[]): KnownChain {
  const known: KnownChain = { chain, rules };
  if (rules.length && rules.every((r) => r.handle !== undefined)) known.handles = rules.map((r) => r.handle);
  return known;
}

export type ChainChange =
  /** The kernel holds these very rules. */
  | { kind: 'same' }
  /** One rule replaced in place (the kernel keeps its handle, so the next change can do it again). */
  | { kind: 'replace'; handle: number }
  /** The rules added, after a flush when the chain holds any. */
  | { kind: 'rewrite'; flush: boolean };

/**
 * How to get from `known` to `chain` with `rules`. `rewrite` forces a write even of the same rules
 * (a chain flushed for deletion that is wanted again must be written to be kept).
 */
export function chainChange(known: KnownChain | undefined, chain: Chain, rules: readonly Rule[], rewrite = false): ChainChange {
  const sameBase = known !== undefined && sameChainBase(known.chain, chain);
  if (!rewrite && sameBase && known.rules.length === rules.length && sameRules(known.rules, rules)) return { kind: 'same' };
  const handle = known?.handles?.[0];
  if (!rewrite && sameBase && handle !== undefined && known.rules.length === 1 && rules.length === 1) return { kind: 'replace', handle };
  return { kind: 'rewrite', flush: (known?.rules.length ?? 0) > 0 };
}

/** Rules grouped by the chain they belong to (by `key`), in order. */
export function rulesByChain(rules: readonly Rule[], key: (r: Rule) => string = (r) => r.chain): Map<string, Rule[]> {
  const out = new Map<string, Rule[]>();
  for (const r of rules) {
    const k = key(r);
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push(r);
  }
  return out;
}
