// The fake's ruleset: tables in creation order, each with its chains (and their rules), its sets
// (and their elements) and the counter the kernel allocates the table's handles from.

import type { Chain, Flowtable, NftObject, NftSet, Rule, SetElement, Table } from '../nft/index.js';
import { jumpTargets } from '../nft/validate.js';

export interface FakeChain {
  chain: Chain;
  /** In chain order, each with its handle. Rule objects are never changed once stored. */
  rules: Rule[];
}

export interface FakeSet {
  /** The declaration, with its handle and without elements. */
  set: NftSet;
  /** By element identity (elementKey). Change it through writableElements(). */
  elements: Map<string, SetElement>;
  /** Whether `elements` is this object's own, or still shared with the ruleset this one copies. */
  ownsElements: boolean;
}

/**
 * The set's elements, to change: a copy's sets share their elements with the ruleset they copy
 * until they change, so that a small commit does not copy every element of a large map.
 */
export function writableElements(s: FakeSet): Map<string, SetElement> {
  if (!s.ownsElements) {
    s.elements = new Map(s.elements);
    s.ownsElements = true;
  }
  return s.elements;
}

export interface FakeTable {
  table: Table;
  /** The last handle given to a chain, set or rule of the table (the kernel's table->hgenerator). */
  lastHandle: number;
  chains: Map<string, FakeChain>;
  sets: Map<string, FakeSet>;
  /** Named objects by `type name` (names are per type), each with its handle. Never changed in place. */
  objects: Map<string, NftObject>;
  /** Flowtables by name, each with its handle. Never changed in place. */
  flowtables: Map<string, Flowtable>;
}

const tableKey = (family: string, name: string): string => `${family} ${name}`;

export class RulesetState {
  /** The last table handle given (the kernel's per-namespace counter). */
  lastTableHandle = 0;
  readonly tables = new Map<string, FakeTable>();
  /**
   * The changes made since the copy was taken: what the kernel records as transaction entries. A
   * batch that records none (an add of what exists, a destroy of what does not) commits nothing,
   * and the generation stays.
   */
  changes = 0;

  table(family: string, name: string): FakeTable | undefined {
    return this.tables.get(tableKey(family, name));
  }

  addTable(table: Table): FakeTable {
    const t: FakeTable = { table: { ...table, handle: ++this.lastTableHandle }, lastHandle: 0, chains: new Map(), sets: new Map(), objects: new Map(), flowtables: new Map() };
    this.tables.set(tableKey(table.family, table.name), t);
    this.changes++;
    return t;
  }

  deleteTable(t: FakeTable): void {
    this.tables.delete(tableKey(t.table.family, t.table.name));
    this.changes++;
  }

  /** For a copy: each table of the copy -> the table it copies. */
  private readonly copied = new Map<FakeTable, FakeTable>();

  /** A copy to apply a transaction on: what an operation changes is copied, never shared. */
  copy(): RulesetState {
    const c = new RulesetState();
    c.lastTableHandle = this.lastTableHandle;
    for (const [k, t] of this.tables) {
      const chains = new Map<string, FakeChain>();
      for (const [name, ch] of t.chains) chains.set(name, { chain: ch.chain, rules: ch.rules.slice() });
      const sets = new Map<string, FakeSet>();
      for (const [name, s] of t.sets) sets.set(name, { set: s.set, elements: s.elements, ownsElements: false });
      const copy: FakeTable = { table: t.table, lastHandle: t.lastHandle, chains, sets, objects: new Map(t.objects), flowtables: new Map(t.flowtables) };
      c.tables.set(k, copy);
      c.copied.set(copy, t);
    }
    return c;
  }

  /**
   * For a copy whose transaction was refused: the handles it allocated stay used in the ruleset it
   * copies, as the kernel does not take back the handles of an aborted batch.
   */
  keepHandlesUsedIn(original: RulesetState): void {
    original.lastTableHandle = this.lastTableHandle;
    for (const [copy, table] of this.copied) table.lastHandle = copy.lastHandle;
  }
}

/** Whether a rule or a verdict map element of the table jumps or goes to the chain. */
export function chainInUse(t: FakeTable, chain: string): boolean {
  for (const c of t.chains.values()) {
    if (c.chain.name === chain) continue;
    for (const r of c.rules) if (jumpTargets(r.exprs).includes(chain)) return true;
  }
  for (const s of t.sets.values()) {
    if (s.set.data !== 'verdict') continue;
    for (const e of s.elements.values()) {
      const v = e.value;
      if (v && !Array.isArray(v) && 'chain' in v && v.chain === chain) return true;
    }
  }
  return false;
}

/** Whether a rule of the table looks the set up or updates it. */
export function setInUse(t: FakeTable, set: string): boolean {
  for (const c of t.chains.values()) {
    for (const r of c.rules) if (r.exprs.some((e) => (e.type === 'lookup' || e.type === 'dynset') && e.set === set)) return true;
  }
  return false;
}
