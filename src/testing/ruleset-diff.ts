// What the fake's monitor announces for a commit: the changes between the ruleset before and after
// it, as the kernel would announce them. The kernel announces them in the batch's order; the fake
// knows only the two states, so it puts deletions first (rules, sets, chains, tables: the order the
// kernel uses for a deleted table's contents) and then additions (tables, chains, sets, elements,
// rules). A rule whose expressions changed under the same handle (a replace) is its delete and its
// add; an element whose data changed, its delete and its add.

import { elementKey, sameRule, type MonitorChange, type NftSet, type Rule, type Ruleset, type SetElement } from '../nft/index.js';

const tableKey = (t: { family: string; name: string; handle?: number }): string => `${t.family}\0${t.name}\0${t.handle ?? ''}`;
const inTable = (o: { family: string; table: string; name: string; handle?: number }): string => `${o.family}\0${o.table}\0${o.name}\0${o.handle ?? ''}`;
const ruleKey = (r: Rule): string => `${r.family}\0${r.table}\0${r.chain}\0${r.handle ?? ''}`;

function byKey<T>(list: readonly T[], key: (x: T) => string): Map<string, T> {
  return new Map(list.map((x) => [key(x), x]));
}

export function rulesetChanges(before: Ruleset, after: Ruleset): MonitorChange[] {
  const out: MonitorChange[] = [];
  const [t0, t1] = [byKey(before.tables, tableKey), byKey(after.tables, tableKey)];
  const [c0, c1] = [byKey(before.chains, inTable), byKey(after.chains, inTable)];
  const [s0, s1] = [byKey(before.sets, inTable), byKey(after.sets, inTable)];
  const [r0, r1] = [byKey(before.rules, ruleKey), byKey(after.rules, ruleKey)];
  const ruleChanged = (k: string, r: Rule): boolean => {
    const other = r1.get(k);
    return other === undefined || !sameRule(r, other);
  };
  for (const [k, r] of r0) if (ruleChanged(k, r)) out.push({ verb: 'delete', kind: 'rule', rule: r });
  for (const [k, s] of s0) {
    const now = s1.get(k);
    if (!now) {
      out.push({ verb: 'delete', kind: 'set', set: bare(s) });
      continue;
    }
    const [gone] = elementDiff(s, now);
    if (gone.length) out.push({ verb: 'delete', kind: 'element', set: bare(now), elements: gone });
  }
  for (const [k, c] of c0) if (!c1.has(k)) out.push({ verb: 'delete', kind: 'chain', chain: c });
  for (const [k, t] of t0) if (!t1.has(k)) out.push({ verb: 'delete', kind: 'table', table: t });
  for (const [k, t] of t1) if (!t0.has(k)) out.push({ verb: 'add', kind: 'table', table: t });
  for (const [k, c] of c1) if (!c0.has(k)) out.push({ verb: 'add', kind: 'chain', chain: c });
  for (const [k, s] of s1) {
    const was = s0.get(k);
    if (!was) out.push({ verb: 'add', kind: 'set', set: bare(s) });
    const [, added] = was ? elementDiff(was, s) : [[], s.elements ?? []];
    if (added.length) out.push({ verb: 'add', kind: 'element', set: bare(s), elements: added });
  }
  for (const [k, r] of r1) {
    const was = r0.get(k);
    if (!was || !sameRule(was, r)) out.push({ verb: 'add', kind: 'rule', rule: r });
  }
  return out;
}

function bare(s: NftSet): NftSet {
  const { elements: _e, elementKeys: _k, ...rest } = s;
  return rest;
}

/** [deleted, added] elements of a set that exists before and after. */
function elementDiff(before: NftSet, after: NftSet): [SetElement[], SetElement[]] {
  const text = (e: SetElement): string => `${elementKey(after, e)}=${JSON.stringify(e.value ?? null)}`;
  const was = new Map((before.elements ?? []).map((e) => [text(e), e]));
  const now = new Map((after.elements ?? []).map((e) => [text(e), e]));
  return [[...was].filter(([k]) => !now.has(k)).map(([, e]) => e), [...now].filter(([k]) => !was.has(k)).map(([, e]) => e)];
}
