// An in-memory ruleset that applies operations the way nf_tables does (for the verbs that need no
// kernel-assigned handle): the golden model tests compare dumps with, and a fake for code that
// wants to see what a transaction would leave behind without a kernel.

import type { Flowtable, NftObject } from './named-objects.js';
import type { Chain, NftSet, Rule, Ruleset, SetElement, Table } from './objects.js';
import type { Operation } from './operations.js';
import type { Expr } from './expr/index.js';
import { elementKey, hasRangeSyntax, intervalView } from './values.js';

const tkey = (family: string, name: string): string => `${family} ${name}`;
const okey = (family: string, table: string, name: string): string => `${family} ${table} ${name}`;

export class RulesetModel {
  private readonly tables = new Map<string, Table>();
  private readonly chains = new Map<string, Chain>();
  private readonly sets = new Map<string, NftSet>();
  private readonly rules = new Map<string, Rule[]>();
  /** Named objects by family, table, type and name (names are per type). */
  private readonly objects = new Map<string, NftObject>();
  private readonly flowtables = new Map<string, Flowtable>();

  /** kernelDefaults: also apply what the kernel fills in by itself (false: exactly what was written). */
  constructor(private readonly opts: { kernelDefaults?: boolean } = {}) {}

  apply(ops: readonly Operation[]): this {
    for (const op of ops) this.applyOne(op);
    return this;
  }

  private applyOne(op: Operation): void {
    switch (op.kind) {
      case 'table': {
        const k = tkey(op.table.family, op.table.name);
        if (op.verb === 'add' || op.verb === 'create') {
          if (!this.tables.has(k)) this.tables.set(k, { ...op.table });
        } else if (op.verb === 'flush') {
          for (const [ck, rules] of this.rules) if (ck.startsWith(`${k} `)) rules.length = 0;
        } else {
          this.tables.delete(k);
          for (const m of [this.chains, this.sets, this.rules, this.objects, this.flowtables] as Map<string, unknown>[]) {
            for (const ck of [...m.keys()]) if (ck.startsWith(`${k} `)) m.delete(ck);
          }
        }
        return;
      }
      case 'chain': {
        const c = op.chain;
        const k = okey(c.family, c.table, c.name);
        if (op.verb === 'add' || op.verb === 'create') {
          if (!this.chains.has(k)) {
            this.chains.set(k, { ...c });
            this.rules.set(k, []);
          }
        } else if (op.verb === 'flush') this.rules.set(k, []);
        else {
          this.chains.delete(k);
          this.rules.delete(k);
        }
        return;
      }
      case 'rule': {
        const r = op.rule;
        const list = this.rules.get(okey(r.family, r.table, r.chain));
        if (!list) throw new Error(`model: chain ${r.chain} does not exist`);
        const stored: Rule = { ...r, exprs: r.exprs.map(kernelInline) };
        if (op.verb === 'add' && r.position === undefined) list.push(stored);
        else if (op.verb === 'insert' && r.position === undefined) list.unshift(stored);
        else throw new Error(`model: ${op.verb} rule by handle or position needs the kernel's handles`);
        return;
      }
      case 'set': {
        const s = op.set;
        const k = okey(s.family, s.table, s.name);
        if (op.verb === 'add' || op.verb === 'create') {
          if (!this.sets.has(k)) {
            const copy: NftSet = { ...s, elements: [] };
            // Linux (seen on 6.18) reports a size of 65535 for a dynamic set created without one.
            if (this.opts.kernelDefaults !== false && copy.size === undefined && s.flags?.includes('dynamic')) copy.size = 65535;
            this.sets.set(k, copy);
          }
          if (s.elements?.length) this.addElements(this.sets.get(k)!, s.elements);
        } else if (op.verb === 'flush') {
          const cur = this.sets.get(k);
          if (cur) cur.elements = [];
        } else this.sets.delete(k);
        return;
      }
      case 'element': {
        const s = this.sets.get(okey(op.set.family, op.set.table, op.set.name));
        if (!s) throw new Error(`model: set ${op.set.name} does not exist`);
        if (op.verb === 'add' || op.verb === 'create') this.addElements(s, op.elements);
        else {
          const gone = new Set(op.elements.map((e) => elementKey(s, e)));
          s.elements = (s.elements ?? []).filter((e) => !gone.has(elementKey(s, e)));
        }
        return;
      }
      case 'object': {
        const o = op.object;
        const k = okey(o.family, o.table, `${o.type}\0${o.name}`);
        if (op.verb === 'add' || op.verb === 'create') {
          if (!this.objects.has(k)) this.objects.set(k, { ...op.object });
        } else this.objects.delete(k);
        return;
      }
      case 'flowtable': {
        const f = op.flowtable;
        const k = okey(f.family, f.table, f.name);
        if (op.verb === 'add' || op.verb === 'create') {
          if (!this.flowtables.has(k)) this.flowtables.set(k, { ...f, devices: [...f.devices] });
        } else this.flowtables.delete(k);
        return;
      }
    }
  }

  private addElements(s: NftSet, elements: readonly SetElement[]): void {
    const have = new Set((s.elements ?? []).map((e) => elementKey(s, e)));
    for (const e of elements) {
      const k = elementKey(s, e);
      if (have.has(k)) continue;
      have.add(k);
      ((s.elements ??= []) as SetElement[]).push(e);
    }
    if (s.flags?.includes('interval') && s.key.length === 1) s.elements = intervalView(s.key[0]!, s.elements ?? [], false, `set ${s.name}`);
  }

  ruleset(generation = 0): Ruleset {
    return {
      generation,
      tables: [...this.tables.values()],
      chains: [...this.chains.values()],
      sets: [...this.sets.values()].map((s) => (s.elements?.length ? s : { ...s, elements: undefined })).map(stripUndefined),
      rules: [...this.chains.keys()].flatMap((k) => this.rules.get(k) ?? []),
      ...(this.objects.size ? { objects: [...this.objects.values()] } : {}),
      ...(this.flowtables.size ? { flowtables: [...this.flowtables.values()] } : {}),
    };
  }
}

/** An inline anonymous set as the encoder writes it: interval sets merged and normalized. */
function kernelInline(e: Expr): Expr {
  if (e.type !== 'lookup' || !e.inline?.elements || e.inline.key.length !== 1) return e;
  const inline = e.inline;
  if (!inline.elements!.some((el) => hasRangeSyntax(inline, el))) return e;
  const elements = intervalView(e.inline.key[0]!, e.inline.elements, !e.inline.data, `anonymous set of a rule`);
  return { ...e, inline: { ...e.inline, flags: ['interval'], elements } };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
