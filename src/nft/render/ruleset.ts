// A whole ruleset (a dump, or the objects a layout produces) as `nft -f` text in the shape
// `nft list ruleset` prints: one block per table with its sets, maps and chains.

import type { Chain, NftSet, Rule, RulesetObjects, Table } from '../objects.js';
import { quoteName } from '../types/verdict.js';
import { renderRule, type RenderedRule, type RuleRenderContext } from './rule.js';
import { elementsText, setDeclarationLines, sortedElements } from './set.js';
import { quoteString } from './text.js';
import { devicesText, flowtableBlock, objectBlock } from './object.js';

export function chainHeaderLine(c: Chain): string | undefined {
  if (!c.base) return undefined;
  // Numbers, not names: nft 1.0.6 accepts a name like dstnat only on some hooks.
  const devices = c.base.devices ?? [];
  const device = devices.length === 1 ? ` device ${quoteString(devices[0]!)}` : devices.length ? ` devices = ${devicesText(devices)}` : '';
  return `type ${c.base.type} hook ${c.base.hook}${device} priority ${c.base.priority}; policy ${c.base.policy ?? 'accept'};`;
}

/**
 * One rule's text as it stands inside a chain block (statements, then its comment), and whether
 * nft -f can read it back (see renderRule).
 */
export function ruleText(r: Rule, ctx: RuleRenderContext): RenderedRule {
  const body = renderRule(r.exprs, ctx);
  if (r.comment === undefined) return body;
  // A comment nft cannot quote is dropped from a rule listed for reading only.
  if (r.comment.includes('"')) return { text: `${body.text} comment ${JSON.stringify(r.comment)}`, loadable: false };
  return { text: `${body.text} comment ${quoteString(r.comment)}`, loadable: body.loadable };
}

/** A line nft -f reads, or, for a rule it cannot read, the same text as a comment. */
export function loadableLine(line: string, rendered: RenderedRule): string {
  return rendered.loadable ? line : `# ${line}`;
}

export function setContext(family: Rule['family'], sets: readonly NftSet[]): RuleRenderContext {
  const byName = new Map(sets.map((s) => [s.name, s]));
  return { family, findSet: (name) => byName.get(name) };
}

function tableBlock(t: Table, rs: RulesetObjects, ind: string): string[] {
  const same = <T extends { family: string; table: string }>(o: T): boolean => o.family === t.family && o.table === t.name;
  const sets = rs.sets.filter(same);
  const ctx = setContext(t.family, sets);
  const out: string[] = [`table ${t.family} ${quoteName(t.name)} {`];
  const body: string[][] = [];
  const head: string[] = [];
  if (t.flags?.length) head.push(`${ind}flags ${t.flags.join(',')}`);
  if (t.comment !== undefined) head.push(`${ind}comment ${quoteString(t.comment)}`);
  if (head.length) out.push(...head);
  // nft's order: objects, sets, flowtables, chains.
  for (const o of (rs.objects ?? []).filter(same)) body.push(objectBlock(o, ind));
  for (const s of sets) {
    const block = [`${ind}${s.data || s.objects ? 'map' : 'set'} ${quoteName(s.name)} {`];
    for (const l of setDeclarationLines(s)) block.push(`${ind}${ind}${l}`);
    if (s.elements?.length) block.push(`${ind}${ind}elements = ${elementsText(s, sortedElements(s, s.elements))}`);
    block.push(`${ind}}`);
    body.push(block);
  }
  for (const f of (rs.flowtables ?? []).filter(same)) body.push(flowtableBlock(f, ind));
  for (const c of rs.chains.filter(same)) {
    const block = [`${ind}chain ${quoteName(c.name)} {`];
    if (c.comment !== undefined) block.push(`${ind}${ind}comment ${quoteString(c.comment)}`);
    const header = chainHeaderLine(c);
    if (header) block.push(`${ind}${ind}${header}`);
    for (const r of rs.rules.filter((r) => same(r) && r.chain === c.name)) {
      const rendered = ruleText(r, ctx);
      block.push(`${ind}${ind}${loadableLine(rendered.text, rendered)}`);
    }
    block.push(`${ind}}`);
    body.push(block);
  }
  body.forEach((block, i) => {
    if (i > 0 || head.length) out.push('');
    out.push(...block);
  });
  out.push('}');
  return out;
}

/** The ruleset as nft text that `nft -f` accepts (tabs, as `nft list ruleset` indents). */
export function renderRuleset(rs: RulesetObjects): string {
  return rs.tables.map((t) => tableBlock(t, rs, '\t').join('\n')).join('\n') + (rs.tables.length ? '\n' : '');
}
