// A transaction as `nft -f` commands: the debugging format, the golden-test format and the input
// of the `nft -f` side of every benchmark. One line per operation, in order.

import type { Operation } from '../operations.js';
import { quoteName } from '../types/verdict.js';
import { chainHeaderLine, loadableLine, ruleText, setContext } from './ruleset.js';
import { elementsText, setDeclarationLines } from './set.js';
import { quoteString } from './text.js';
import { flowtableCommand, objectCommand } from './object.js';
import type { NftSet } from '../objects.js';

export interface CommandRenderOptions {
  /** Named sets known besides those the operations add (types and names for lookups). */
  knownSets?: readonly NftSet[];
}

export function renderOperation(op: Operation, sets: readonly NftSet[]): string {
  switch (op.kind) {
    case 'table': {
      const t = op.table;
      const head = `${op.verb} table ${t.family} ${quoteName(t.name)}`;
      if ((op.verb === 'add' || op.verb === 'create') && (t.comment !== undefined || t.flags?.length)) {
        const parts: string[] = [];
        if (t.flags?.length) parts.push(`flags ${t.flags.join(',')};`);
        if (t.comment !== undefined) parts.push(`comment ${quoteString(t.comment)};`);
        return `${head} { ${parts.join(' ')} }`;
      }
      return head;
    }
    case 'chain': {
      const c = op.chain;
      const head = `${op.verb} chain ${c.family} ${quoteName(c.table)} ${quoteName(c.name)}`;
      if (op.verb !== 'add' && op.verb !== 'create') return c.handle !== undefined && op.verb !== 'flush' ? `${op.verb} chain ${c.family} ${quoteName(c.table)} handle ${c.handle}` : head;
      const parts: string[] = [];
      const header = chainHeaderLine(c);
      if (header) parts.push(header);
      if (c.comment !== undefined) parts.push(`comment ${quoteString(c.comment)};`);
      return parts.length ? `${head} { ${parts.join(' ')} }` : head;
    }
    case 'rule': {
      const r = op.rule;
      const head = `${op.verb} rule ${r.family} ${quoteName(r.table)} ${quoteName(r.chain)}`;
      if (op.verb === 'delete' || op.verb === 'destroy') return `${head} handle ${r.handle}`;
      const where = op.verb === 'replace' ? ` handle ${r.handle}` : r.position !== undefined ? ` position ${r.position}` : '';
      const rendered = ruleText(r, setContext(r.family, sets.filter((s) => s.family === r.family && s.table === r.table)));
      return loadableLine(`${head}${where} ${rendered.text}`, rendered);
    }
    case 'set': {
      const s = op.set;
      const kind = s.data || s.objects ? 'map' : 'set';
      const head = `${op.verb} ${kind} ${s.family} ${quoteName(s.table)} ${quoteName(s.name)}`;
      if (op.verb !== 'add' && op.verb !== 'create') return head;
      const lines = setDeclarationLines(s).map((l) => `${l};`);
      if (s.elements?.length) lines.push(`elements = ${elementsText(s, s.elements)};`);
      return `${head} { ${lines.join(' ')} }`;
    }
    case 'element': {
      const s = op.set;
      const keysOnly = op.verb === 'delete' || op.verb === 'destroy';
      return `${op.verb} element ${s.family} ${quoteName(s.table)} ${quoteName(s.name)} ${elementsText(s, op.elements, keysOnly)}`;
    }
    case 'object':
      return objectCommand(op.verb, op.object);
    case 'flowtable':
      return flowtableCommand(op.verb, op.flowtable);
  }
}

/** Renders operations as nft commands, one per line. */
export function renderCommands(ops: readonly Operation[], opts: CommandRenderOptions = {}): string {
  const sets: NftSet[] = [...(opts.knownSets ?? [])];
  const lines: string[] = [];
  for (const op of ops) {
    if (op.kind === 'set' && (op.verb === 'add' || op.verb === 'create')) sets.push(op.set);
    if (op.kind === 'element' && op.elements.length === 0) continue;
    lines.push(renderOperation(op, sets));
  }
  return lines.join('\n') + (lines.length ? '\n' : '');
}
