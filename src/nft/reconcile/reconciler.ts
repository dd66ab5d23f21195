// The reconciler: desired objects of the tables it owns versus what the kernel holds, turned into
// the smallest transaction. Element-level deltas for every named set and map; chains compared rule
// by rule and rewritten (flush + add, atomically) only when they differ; leftovers deleted. A full
// resync reads the kernel back (one dump) and recomputes everything against it.

import type { Chain, NftSet, Rule, RulesetObjects, SetElement, Table } from '../objects.js';
import { Transaction } from '../transaction.js';
import { ElementStore } from './element-store.js';
import { chainChange, rulesByChain, type KnownChain } from './known-chain.js';
import { sameChainBase } from './rule-equality.js';

export interface DesiredState {
  tables: readonly Table[];
  chains: readonly Chain[];
  /** Named sets and maps, each with its desired elements. */
  sets: readonly NftSet[];
  /** Rules of every chain, in order. */
  rules: readonly Rule[];
}

export interface ReconcileStats {
  chainsWritten: number;
  chainsDeleted: number;
  setsCreated: number;
  setsDeleted: number;
  elementsChanged: number;
}

const ckey = (family: string, table: string, name: string): string => `${family} ${table} ${name}`;

export class Reconciler {
  private tables = new Map<string, Table>();
  private chains = new Map<string, KnownChain>();
  private sets = new Map<string, NftSet>();
  private readonly stores = new Map<string, ElementStore>();
  private pending: { chains: Map<string, KnownChain>; sets: Map<string, NftSet>; tables: Map<string, Table> } | undefined;

  /** Replaces what is known about the owned tables with a dump of them. */
  resync(dump: RulesetObjects, owned: readonly Table[]): void {
    const owns = new Set(owned.map((t) => `${t.family} ${t.name}`));
    const mine = <T extends { family: string; table: string }>(o: T): boolean => owns.has(`${o.family} ${o.table}`);
    this.tables = new Map(dump.tables.filter((t) => owns.has(`${t.family} ${t.name}`)).map((t) => [`${t.family} ${t.name}`, t]));
    this.sets = new Map(dump.sets.filter(mine).map((s) => [ckey(s.family, s.table, s.name), s]));
    this.chains = new Map();
    const rules = rulesByChain(dump.rules, (r) => ckey(r.family, r.table, r.chain));
    // Without handles: a chain's rules are rewritten, not replaced one by one.
    for (const c of dump.chains.filter(mine)) {
      const k = ckey(c.family, c.table, c.name);
      this.chains.set(k, { chain: c, rules: rules.get(k) ?? [] });
    }
    for (const [k, store] of this.stores) {
      const s = this.sets.get(k);
      if (s) store.resync(s.elements ?? []);
      else store.forget();
    }
    this.pending = undefined;
  }

  private store(s: NftSet): ElementStore {
    const k = ckey(s.family, s.table, s.name);
    let st = this.stores.get(k);
    if (!st || st.set.key.length !== s.key.length) {
      st = new ElementStore(s);
      const known = this.sets.get(k);
      if (known?.elements) st.resync(known.elements);
      this.stores.set(k, st);
    }
    return st;
  }

  /**
   * Queues on `tx` what it takes to turn the known state into `desired`, in a safe order: tables,
   * sets and chains first, then chain contents and elements (so a verdict never points at a chain
   * that does not exist yet), then deletions of what is no longer wanted.
   */
  plan(desired: DesiredState, tx: Transaction = new Transaction()): { tx: Transaction; stats: ReconcileStats } {
    const stats: ReconcileStats = { chainsWritten: 0, chainsDeleted: 0, setsCreated: 0, setsDeleted: 0, elementsChanged: 0 };
    const nextTables = new Map(desired.tables.map((t) => [`${t.family} ${t.name}`, t]));
    for (const [k, t] of nextTables) if (!this.tables.has(k)) tx.add({ table: t });

    const nextSets = new Map(desired.sets.map((s) => [ckey(s.family, s.table, s.name), s]));
    for (const [k, s] of nextSets) {
      const known = this.sets.get(k);
      if (!known || !sameSetShape(known, s)) {
        if (known) {
          tx.delete({ set: known });
          this.store(s).forget();
        }
        const { elements: _elements, ...decl } = s;
        tx.add({ set: decl });
        stats.setsCreated++;
      }
    }

    const nextChains = new Map<string, KnownChain>();
    const desiredRules = rulesByChain(desired.rules, (r) => ckey(r.family, r.table, r.chain));
    for (const c of desired.chains) {
      const k = ckey(c.family, c.table, c.name);
      nextChains.set(k, { chain: c, rules: desiredRules.get(k) ?? [] });
      const known = this.chains.get(k);
      if (!known || !sameChainBase(known.chain, c)) tx.add({ chain: c });
    }
    // Chain contents, after every chain exists (rules may jump to chains declared later).
    for (const [k, next] of nextChains) {
      const change = chainChange(this.chains.get(k), next.chain, next.rules);
      if (change.kind === 'same') continue;
      if (change.kind === 'replace') tx.replace({ rule: { ...next.rules[0]!, handle: change.handle } });
      else {
        if (change.flush) tx.flush({ chain: next.chain });
        for (const r of next.rules) tx.add({ rule: r });
      }
      stats.chainsWritten++;
    }
    for (const s of desired.sets) {
      const st = this.store(s);
      st.setDesired(s.elements ?? []);
      stats.elementsChanged += st.queue(tx);
    }
    // Deletions: chains first (rules and verdicts referencing them are gone by now), then sets.
    for (const [k, known] of this.chains) {
      if (nextChains.has(k) || !nextTables.has(`${known.chain.family} ${known.chain.table}`)) continue;
      if (known.rules.length) tx.flush({ chain: known.chain });
      tx.delete({ chain: known.chain });
      stats.chainsDeleted++;
    }
    for (const [k, known] of this.sets) {
      if (nextSets.has(k) || !nextTables.has(`${known.family} ${known.table}`)) continue;
      tx.delete({ set: known });
      this.stores.delete(k);
      stats.setsDeleted++;
    }
    this.pending = { chains: nextChains, sets: nextSets, tables: nextTables };
    return { tx, stats };
  }

  /** The last planned transaction was committed. */
  committed(): void {
    if (!this.pending) return;
    this.chains = this.pending.chains;
    this.sets = this.pending.sets;
    this.tables = this.pending.tables;
    for (const st of this.stores.values()) st.committed();
    this.pending = undefined;
  }

  /** The last planned transaction failed: nothing changed in the kernel; the next plan starts over. */
  failed(): void {
    this.pending = undefined;
    for (const st of this.stores.values()) st.failed();
  }

  /** Desired elements of a set that the reconciler tracks (for partial updates). */
  elementStore(s: NftSet): ElementStore {
    return this.store(s);
  }

  /** Keeps a set's element store current without a full plan: returns the elements it would queue. */
  planElements(s: NftSet, elements: Iterable<SetElement>, tx: Transaction): number {
    const st = this.store(s);
    st.setDesired(elements);
    return st.queue(tx);
  }
}

function sameSetShape(a: NftSet, b: NftSet): boolean {
  const types = (t: NftSet['key'] | NftSet['data']): string => (t === undefined ? '' : t === 'verdict' ? 'verdict' : t.map((x) => `${x.name}/${x.size}`).join('.'));
  const flags = (s: NftSet): string => [...(s.flags ?? [])].sort().join(',');
  return types(a.key) === types(b.key) && types(a.data) === types(b.data) && flags(a) === flags(b) && (a.timeout ?? 0) === (b.timeout ?? 0) && (a.comment ?? '') === (b.comment ?? '');
}
