// The monitor's filters (MonitorOptions family, table, kinds), applied to changes and, before
// anything is decoded, to the family and table a kernel message names.

import type { Family } from '../objects.js';
import type { MonitorChange, MonitorKind, MonitorOptions } from './events.js';

export class MonitorFilter {
  private readonly kinds: ReadonlySet<MonitorKind> | undefined;

  constructor(private readonly opts: Pick<MonitorOptions, 'family' | 'table' | 'kinds'> = {}) {
    this.kinds = opts.kinds ? new Set(opts.kinds) : undefined;
  }

  /** Whether objects of this family and table pass (decide before decoding them). */
  scope(family: Family, table: string): boolean {
    return (this.opts.family === undefined || this.opts.family === family) && (this.opts.table === undefined || this.opts.table === table);
  }

  kind(kind: MonitorKind): boolean {
    return this.kinds === undefined || this.kinds.has(kind);
  }

  change(c: MonitorChange): boolean {
    if (!this.kind(c.kind)) return false;
    const o = c.kind === 'table' ? { family: c.table.family, table: c.table.name } : c.kind === 'chain' ? c.chain : c.kind === 'rule' ? c.rule : c.set;
    return this.scope(o.family, o.table);
  }
}
