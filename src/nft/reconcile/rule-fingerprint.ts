// Two rules are the same when they do the same thing: their rendered statements (counter values
// and the names the kernel gives anonymous sets left out) and their comment.

import type { Expr } from '../expr/index.js';
import type { NftSet, Rule } from '../objects.js';
import { RenderError, renderRuleExprs } from '../render/rule.js';

function withoutCounts(exprs: readonly Expr[]): Expr[] {
  return exprs.map((e) => {
    if (e.type === 'counter') return { type: 'counter' };
    if (e.type === 'lookup' && e.inline) return { ...e, set: '', setId: undefined } as Expr;
    return e;
  });
}

export function ruleFingerprint(r: Rule, sets: ReadonlyMap<string, NftSet>): string {
  let body: string;
  try {
    body = renderRuleExprs(withoutCounts(r.exprs), { family: r.family, findSet: (n) => sets.get(n) });
  } catch (err) {
    if (!(err instanceof RenderError)) throw err;
    // No nft text for it: compare the expressions themselves.
    body = JSON.stringify(withoutCounts(r.exprs), (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'bigint' ? v.toString() : v));
  }
  return r.comment === undefined ? body : `${body} #${r.comment}`;
}
