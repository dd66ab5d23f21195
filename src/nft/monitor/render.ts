// Monitor events as `nft monitor` prints them: one nft command per change (an element change one
// line per element, as nft prints each element's event), then `# new generation N by process PID
// (NAME)` for the transaction.

import { renderOperation } from '../render/commands.js';
import type { NftSet } from '../objects.js';
import { quoteName } from '../types/verdict.js';
import type { MonitorChange, MonitorEvent } from './events.js';

/** The lines of one event. `sets`: named sets known besides the event's (for rules' lookups). */
export function monitorLines(ev: MonitorEvent, sets: readonly NftSet[] = []): string[] {
  if (ev.type === 'lost') return ['# events lost (the monitor fell behind and the kernel dropped events): dump the ruleset to resync'];
  const known = [...sets];
  const lines: string[] = [];
  for (const c of ev.changes) {
    if (c.kind === 'set' && c.verb === 'add') known.push(c.set);
    lines.push(...changeLines(c, known));
  }
  const by = ev.pid !== undefined ? ` by process ${ev.pid}${ev.processName !== undefined ? ` (${ev.processName})` : ''}` : '';
  lines.push(`# new generation ${ev.generation}${by}`);
  return lines;
}

function changeLines(c: MonitorChange, sets: readonly NftSet[]): string[] {
  switch (c.kind) {
    case 'table':
      // nft names the table only (its comment and flags are in `nft list`).
      return [`${c.verb} table ${c.table.family} ${quoteName(c.table.name)}`];
    case 'chain':
      // nft names a deleted chain by its name, not by handle.
      if (c.verb === 'delete') return [`delete chain ${c.chain.family} ${quoteName(c.chain.table)} ${quoteName(c.chain.name)}`];
      return [renderOperation(c, sets)];
    case 'rule':
      // A rule event carries its own handle, not a position to render.
      if (c.verb !== 'delete') return [renderOperation({ ...c, rule: { ...c.rule, position: undefined } }, sets)];
      return [renderOperation(c, sets)];
    case 'element':
      if (c.undecoded) return [`# ${c.verb} ${c.undecoded} element(s) of ${c.set.family} ${c.set.table} ${c.set.name}: the set's types are unknown`];
      return c.elements.map((e) => renderOperation({ ...c, elements: [e] }, sets));
    default:
      return [renderOperation(c, sets)];
  }
}
