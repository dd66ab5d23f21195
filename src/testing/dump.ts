// The fake's ruleset as a dump reads the kernel's: tables, chains, sets (with their elements and,
// when asked, their identities) and rules in creation and chain order, with their handles; a
// rule's inline sets inside its lookups (without the elements of digested ones when asked, as the
// addon leaves them out). Every rule the fake holds came through a Transaction, as if written by
// the encoder: asked, each comes without its expressions, with their digest.

import type { DumpOptions, Expr, NftSet, Rule, Ruleset } from '../nft/index.js';
import { withToJSON } from '../nft/render/json.js';
import { elementHashes } from '../nft/reconcile/element-hashes.js';
import { exprsDigestOf } from '../nft/rule-digest.js';
import { elementKey } from '../nft/values.js';
import type { FakeSet, RulesetState } from './ruleset-state.js';

export function dumpRuleset(state: RulesetState, generation: number, opts: DumpOptions = {}): Ruleset {
  const out: Ruleset = { generation, tables: [], chains: [], sets: [], rules: [] };
  for (const t of state.tables.values()) {
    if (opts.family !== undefined && t.table.family !== opts.family) continue;
    if (opts.table !== undefined && t.table.name !== opts.table) continue;
    const dumped = (r: Rule): Rule => (opts.ruleExprs === false ? withoutExprs(r) : opts.anonymousElements === false ? withoutDigestedElements(r) : r);
    if (opts.chain !== undefined) {
      // Only the chain's rules, as the kernel's rule dump of one chain.
      out.rules.push(...(t.chains.get(opts.chain)?.rules ?? []).map(dumped));
      continue;
    }
    out.tables.push(t.table);
    for (const s of t.sets.values()) out.sets.push(dumpedSet(s, opts));
    if (opts.chains === false) {
      // No rules to hold the anonymous sets: they are listed among the sets, as the kernel's are.
      for (const c of t.chains.values()) for (const r of c.rules) for (const e of r.exprs) if (e.type === 'lookup' && e.inline) out.sets.push(anonymousSet(e.inline, opts));
    } else {
      for (const c of t.chains.values()) {
        out.chains.push(c.chain);
        out.rules.push(...c.rules.map(dumped));
      }
    }
    if (t.objects.size) (out.objects ??= []).push(...t.objects.values());
    if (t.flowtables.size) (out.flowtables ??= []).push(...t.flowtables.values());
  }
  // JSON-safe as a kernel dump is (render/json.ts).
  return withToJSON(structuredCopy(out));
}

/** The rule without its expressions, known by their digest. */
function withoutExprs(r: Rule): Rule {
  return { ...r, exprs: [], exprsDigest: exprsDigestOf(r.exprs) };
}

/** The rule with its digested inline sets' elements left out. */
function withoutDigestedElements(r: Rule): Rule {
  const digested = (e: Expr): boolean => e.type === 'lookup' && e.inline?.elementsDigest !== undefined;
  if (!r.exprs.some(digested)) return r;
  const exprs = r.exprs.map((e) => {
    if (e.type !== 'lookup' || !digested(e)) return e;
    const { elements: _elements, ...inline } = e.inline!;
    return { ...e, inline };
  });
  return { ...r, exprs };
}

/** A rule's inline set as a set of its own (DumpOptions.chains false): its elements unless left out. */
function anonymousSet(inline: NftSet, opts: DumpOptions): NftSet {
  if (opts.elements !== false && !(opts.anonymousElements === false && inline.elementsDigest !== undefined)) return inline;
  const { elements: _elements, ...set } = inline;
  return set;
}

function dumpedSet(s: FakeSet, opts: DumpOptions): NftSet {
  if (opts.elements === false || opts.omitElementsOf?.includes(s.set.name)) return s.set;
  const elements = [...s.elements.values()];
  const set: NftSet = { ...s.set, elements };
  if (opts.elementKeys && !(s.set.flags ?? []).includes('interval')) set.elementKeys = elements.map((e) => elementKey(s.set, e));
  // As the addon's dump: hashes for the sets asked (and covered); the elements come anyway.
  const hashes = opts.hashElements?.(s.set) ? elementHashes(s.set, [elements]) : undefined;
  if (hashes) set.elementHashes = hashes;
  return set;
}

/**
 * A copy the caller may change without changing the fake. Data types are objects with methods
 * (a set's key), which structuredClone cannot copy: those are shared, as a decoded dump shares them.
 */
function structuredCopy<T>(v: T): T {
  if (Array.isArray(v)) return v.map(structuredCopy) as T;
  if (v instanceof Uint8Array) return v.slice() as T;
  if (v === null || typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype || isDatatype(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = structuredCopy(x);
  return out as T;
}

const isDatatype = (x: object): boolean => typeof (x as { write?: unknown }).write === 'function';
