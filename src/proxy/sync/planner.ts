// The sync planner: the model's service ports, built into the layout's objects and compared with
// what the kernel holds (a KernelView), become a Plan. No I/O: a cold start's caller commits each
// part as the planner hands it over (`part`), and everything else plans in one go.
//
// Full plans compare everything (against a dump, at start and after any failure); partial plans
// rewrite only the chains of changed service ports and update the shared sets element by element.

import { chainChange, knownChain, rulesByChain, sameChainBase, Transaction, type Chain, type NftSet, type Rule } from '../../nft/index.js';
import type { Logger } from '../../logging/logger.js';
import { stateSize } from '../model/state-size.js';
import type { ProxyState, ServicePort, ServicePortId, StateChange } from '../model/types.js';
import { nftFamily, type ChainRules, type Layout, type LayoutConfig, type ServiceObjects } from '../layout/types.js';
import { ElementIndex, type Contributor } from './element-index.js';
import { KernelView } from './kernel-view.js';
import { NO_SHARED_CHAINS, Plan } from './plan.js';
import { Exclusions } from './refusals.js';
import type { StaleChains } from './stale-chains.js';

/** Called on a cold start when a part is planned (`last`: the final one), to seal and commit it. */
export type PartReady = (plan: Plan, last: boolean) => Promise<void>;

export class SyncPlanner {
  /** The element stores of the shared sets and maps. */
  readonly index: ElementIndex;
  /** Each service port's objects as the kernel holds them (as of the last commit). */
  private readonly committed = new Map<ServicePortId, ServiceObjects>();
  /** The layout's shared sets the kernel holds (as of the last commit). */
  private shared = new Set<string>();
  /** The layout's shared chains the kernel holds (as of the last commit). */
  private sharedChains: readonly ChainRules[] = NO_SHARED_CHAINS;
  /**
   * The layout's shared sets as the last partial plan found them: each declared in the index and
   * held by the view. A partial plan given the same sets, with the view's sets and the index's
   * declarations as they were, skips that pass over hundreds of sets (at every one-endpoint sync,
   * from caches gone cold between syncs).
   */
  private sharedChecked: { sets: readonly NftSet[]; names: Set<string>; view: KernelView; setsVersion: number; declared: readonly NftSet[] } | undefined;

  constructor(
    private readonly layout: Layout,
    private readonly cfg: LayoutConfig,
    private readonly exclusions: Exclusions,
    private readonly stale: Pick<StaleChains, 'has'>,
    private readonly log: Logger,
  ) {
    this.index = new ElementIndex((name) => this.layout.keysNeverShared?.(name) ?? false);
  }

  /** Service ports' objects as committed, to attribute a refused element to its owner. */
  get committedObjects(): ReadonlyMap<ServicePortId, ServiceObjects> {
    return this.committed;
  }

  /**
   * An empty plan against `view`. Its transactions know the types of the sets the kernel holds and
   * the layout declares (their rendering shows what lookups load), and name anonymous sets after the
   * generation the table was read at. Not bound to the connection (transaction()): a cold start
   * already builds each part while the kernel commits the one before, so both cores are busy, and
   * converting parts on a third thread made it slower (docs/decisions.md).
   */
  newPlan(view: KernelView, chunkOps?: number): Plan {
    const prefix = view.anonymousSetPrefix;
    // The sets when first looked up: a partial sync's transaction mostly queues elements of sets it
    // is given whole, and listing the table's hundreds of sets for each was a tenth of its planning.
    const sets = (): NftSet[] => [...view.sets.values(), ...this.index.declaredSets()];
    return new Plan((expectedBytes) => new Transaction({ sets, ...(prefix ? { anonymousSetPrefix: prefix } : {}), expectedBytes }), chunkOps);
  }

  /**
   * Plans a full sync of `state` against `view` into `plan`. With `part` (a cold start) the plan is
   * handed over in parts of plan.chunkOps operations as it grows; without, nothing here awaits, so
   * the plan is complete when the returned promise is created (previewTransaction relies on that).
   */
  async full(state: ProxyState, view: KernelView, plan: Plan, part?: PartReady): Promise<void> {
    this.layout.fitTo?.(stateSize(state));
    const base = this.layout.base(this.cfg);

    // Service ports gone (or left out) give up what they held before any other is placed.
    for (const [id] of this.committed) {
      if (state.services.has(id) && !this.exclusions.has(id)) continue;
      plan.fragments.set(id, undefined);
      this.layout.release?.(id);
    }

    // The shared sets' stores: what the kernel holds is the baseline (a fresh dump's elements;
    // without one, what the stores know), and nobody has contributed yet.
    this.index.clearContributions();
    const resync = (name: string): void => {
      if (view.elements) this.index.resyncFromDump(name, view.elements.get(name) ?? {});
    };
    for (const name of this.index.names()) resync(name);
    const desiredSets = new Set<string>();
    const addSet = (set: NftSet, owner: Contributor): void => {
      if (desiredSets.has(set.name)) return;
      desiredSets.add(set.name);
      if (!view.sets.has(set.name)) plan.addSet(owner, set);
    };
    const declare = (set: NftSet): void => {
      if (desiredSets.has(set.name)) return;
      const known = this.index.has(set.name);
      this.index.declare(set);
      if (!known) resync(set.name);
      addSet(set, '');
    };

    if (!view.table) plan.addTable(base.table);
    for (const s of base.sets) declare(s);
    this.index.contribute(undefined, base.elements);
    const desiredChains = new Set<string>();
    const writeChains = (owner: Contributor, chains: readonly { chain: Chain; rules: readonly Rule[] }[]): void => {
      for (const { chain } of chains) {
        desiredChains.add(chain.name);
        this.addChainIfMissing(plan, view, owner, chain);
      }
      for (const { chain, rules } of chains) this.writeChain(plan, view, owner, chain, rules);
    };
    const baseRules = rulesByChain(base.rules);
    writeChains('', base.chains.map((chain) => ({ chain, rules: baseRules.get(chain.name) ?? [] })));

    // Service ports in batches: their objects are built, the shared sets they brought declared,
    // then each one's sets, chains, rules and elements. On a cold start a batch is about one part:
    // it is handed over while the next batch is built (dispatch maps last, see cold-start.ts), so
    // the kernel works from the first part on and every part leaves whole services behind.
    const ownSets = new Set<string>();
    let batch: [ServicePortId, ServiceObjects][] = [];
    let batchOps = 0;
    // Shared chains written so far: each once (a cold start's parts forget what they wrote), and
    // a shared chain's rules follow from its name.
    const sharedWritten = new Set<string>();
    const flush = async (last: boolean): Promise<void> => {
      for (const s of this.layout.sharedSets?.(this.cfg) ?? []) declare(s);
      // Before the batch's dispatch elements send anything to them (those go last anyway).
      const fresh = (this.layout.sharedChains?.(this.cfg) ?? NO_SHARED_CHAINS).filter((c) => !sharedWritten.has(c.chain.name));
      for (const c of fresh) sharedWritten.add(c.chain.name);
      writeChains('', fresh);
      for (const [id, f] of batch) {
        for (const s of f.sets) {
          ownSets.add(s.name);
          addSet(s, id);
        }
        writeChains(id, f.chains);
        this.index.contribute(undefined, f.elements);
      }
      batch = [];
      batchOps = 0;
      if (part) await part(plan, last);
      else if (last) plan.queueElements(this.index);
    };
    for (const sp of state.services.values()) {
      if (this.exclusions.has(sp.id)) {
        this.layout.release?.(sp.id);
        continue;
      }
      const f = this.build(sp, state);
      if (!f) continue;
      plan.fragments.set(sp.id, f);
      batch.push([sp.id, f]);
      // Its chains and rules, and one for the elements it adds (a port of the slots layout's
      // balance chains adds nothing else).
      batchOps += 1;
      for (const c of f.chains) batchOps += 1 + c.rules.length;
      if (part && plan.chunkOps && batchOps >= plan.chunkOps) await flush(false);
    }
    this.layout.sweep?.();
    await flush(true);

    // What is in use now decides what is left over.
    plan.shared = new Set((this.layout.sharedSets?.(this.cfg) ?? []).map((s) => s.name));
    plan.sharedChains = this.layout.sharedChains?.(this.cfg) ?? NO_SHARED_CHAINS;
    const declared = new Set([...base.sets.map((s) => s.name), ...plan.shared]);
    for (const name of this.index.names()) if (!declared.has(name)) this.index.undeclare(name);
    view.elements = undefined;
    for (const name of view.chains.keys()) if (!desiredChains.has(name)) this.flushStale(plan, view, name);
    for (const [name, set] of view.sets) if (!declared.has(name) && !ownSets.has(name)) plan.deleteSet('', set);
  }

  /** Plans the changed service ports only, against the view the last commit left. */
  partial(state: ProxyState, change: StateChange, view: KernelView, plan: Plan): void {
    // Partial syncs learn the handles of the rules they write, so that the next change to a
    // one-rule chain is a replace by handle (a cold start does not: 30k echoes for nothing).
    plan.echoes ??= new Map();
    for (const ids of [change.changedServices, change.changedEndpoints, change.removed]) {
      for (const id of ids) {
        if (plan.fragments.has(id)) continue;
        const sp = state.services.get(id);
        const f = sp && !this.exclusions.has(id) ? this.build(sp, state) : undefined;
        if (!f) this.layout.release?.(id);
        plan.fragments.set(id, f);
      }
    }
    // Sets first (rules refer to them), then chains, then their rules, then elements, then leftovers.
    const shared = this.layout.sharedSets?.(this.cfg) ?? [];
    const checked = this.sharedChecked;
    if (checked?.sets === shared && checked.view === view && checked.setsVersion === view.setsVersion && checked.declared === this.index.declaredSets()) {
      plan.shared = checked.names;
    } else {
      plan.shared = new Set(shared.map((s) => s.name));
      let held = true;
      for (const s of shared) {
        this.index.declare(s);
        if (view.sets.has(s.name)) continue;
        plan.addSet('', s);
        held = false;
      }
      this.sharedChecked = held ? { sets: shared, names: plan.shared, view, setsVersion: view.setsVersion, declared: this.index.declaredSets() } : undefined;
    }
    for (const [id, next] of plan.fragments) {
      const prevSets = new Set(this.committed.get(id)?.sets.map((s) => s.name));
      for (const s of next?.sets ?? []) if (!prevSets.has(s.name) && !view.sets.has(s.name)) plan.addSet(id, s);
    }
    // Shared chains before the dispatch elements that send traffic to them.
    plan.sharedChains = this.layout.sharedChains?.(this.cfg) ?? NO_SHARED_CHAINS;
    const sharedChainsChanged = plan.sharedChains !== this.sharedChains;
    if (sharedChainsChanged) {
      for (const { chain } of plan.sharedChains) this.addChainIfMissing(plan, view, '', chain);
      for (const { chain, rules } of plan.sharedChains) this.writeChain(plan, view, '', chain, rules);
    }
    for (const [id, next] of plan.fragments) for (const { chain } of next?.chains ?? []) this.addChainIfMissing(plan, view, id, chain);
    for (const [id, next] of plan.fragments) for (const { chain, rules } of next?.chains ?? []) this.writeChain(plan, view, id, chain, rules);
    for (const [id, next] of plan.fragments) this.index.contribute(this.committed.get(id)?.elements, next?.elements);
    plan.queueElements(this.index);
    for (const [id, next] of plan.fragments) {
      const prev = this.committed.get(id);
      const nextChains = new Set(next?.chains.map((c) => c.chain.name));
      for (const { chain } of prev?.chains ?? []) if (!nextChains.has(chain.name)) this.flushStale(plan, view, chain.name);
      const nextSets = new Set(next?.sets.map((s) => s.name));
      for (const s of prev?.sets ?? []) if (!nextSets.has(s.name)) plan.deleteSet(id, s);
    }
    // Shared chains nobody sends traffic to any more: flushed once the elements that did are gone.
    if (sharedChainsChanged) {
      const kept = new Set(plan.sharedChains.map((c) => c.chain.name));
      for (const { chain } of this.sharedChains) if (!kept.has(chain.name)) this.flushStale(plan, view, chain.name);
    }
    // Shared sets nobody uses any more go last, after the rules bound to them.
    if (plan.shared !== this.shared) for (const name of this.shared) {
      const known = view.sets.get(name);
      if (!plan.shared.has(name) && known) plan.deleteSet('', known);
    }
  }

  /** The plan committed: its service ports' objects and shared sets are now the kernel's. */
  committedPlan(plan: Plan): void {
    for (const name of plan.setDeletes) if (!plan.shared.has(name) && this.shared.has(name)) this.index.undeclare(name);
    this.shared = plan.shared;
    this.sharedChains = plan.sharedChains;
    this.index.committed();
    plan.fragments.forEach((f, id) => {
      if (f) this.committed.set(id, f);
      else this.committed.delete(id);
    });
  }

  /** A service port's objects; undefined (and the port left out) when the layout cannot build them. */
  private build(sp: ServicePort, state: ProxyState): ServiceObjects | undefined {
    try {
      return this.layout.service(this.cfg, sp, state.endpoints.get(sp.id) ?? []);
    } catch (err) {
      this.layout.release?.(sp.id);
      this.exclusions.exclude(sp.id, (err as Error).message);
      this.log.error('service port left out: its objects cannot be built', { servicePort: sp.id, family: nftFamily(this.cfg.family), reason: (err as Error).message });
      return undefined;
    }
  }

  /**
   * A chain of ours as the last commit left it in the model (the fixed ruleset's, or a service
   * port's) and whose it is; undefined for a chain we do not write (targeted-repair.ts).
   */
  desiredChain(name: string): { owner: Contributor; chain: Chain; rules: readonly Rule[] } | undefined {
    for (const [id, f] of this.committed) for (const c of f.chains) if (c.chain.name === name) return { owner: id, ...c };
    const shared = this.sharedChains.find((c) => c.chain.name === name);
    if (shared) return { owner: '', ...shared };
    const base = this.layout.base(this.cfg);
    const chain = base.chains.find((c) => c.name === name);
    return chain && { owner: '', chain, rules: base.rules.filter((r) => r.chain === name) };
  }

  /** Writes a chain's rules if they differ from what the kernel holds. */
  writeChain(plan: Plan, view: KernelView, owner: Contributor, chain: Chain, rules: readonly Rule[]): void {
    const known = plan.chainWrites.get(chain.name) ?? view.chains.get(chain.name);
    // A chain flushed for deletion is written again to be kept, even with the same (no) rules.
    const change = chainChange(known, chain, rules, this.stale.has(chain.name));
    if (change.kind === 'same') {
      // Keep the model's objects (already held by the service port's objects), not the dump's.
      known!.rules = rules;
      return;
    }
    const next = knownChain(chain, rules);
    if (change.kind === 'replace') {
      // A service chain's one rule (the slots layout's, whenever the endpoint count changes).
      plan.replaceRule(owner, rules[0]!, change.handle);
      next.handles = [change.handle];
    } else {
      if (change.flush) plan.flushChain(owner, chain);
      rules.forEach((r, i) => plan.addRule(owner, r, i));
    }
    plan.chainWrites.set(chain.name, next);
    plan.stats.chainsWritten++;
  }

  private addChainIfMissing(plan: Plan, view: KernelView, owner: Contributor, chain: Chain): void {
    const known = view.chains.get(chain.name);
    if (known && sameChainBase(known.chain, chain)) return;
    if (known) {
      // A base chain whose hook or priority changed: recreate it (kube-proxy does the same once per start).
      if (known.rules.length) plan.flushChain(owner, known.chain);
      plan.deleteChain(owner, known.chain);
    }
    plan.addChain(owner, chain);
    plan.chainWrites.set(chain.name, knownChain(chain, []));
  }

  private flushStale(plan: Plan, view: KernelView, name: string): void {
    const known = plan.chainWrites.get(name) ?? view.chains.get(name);
    if (!known || this.stale.has(name)) return;
    if (known.rules.length) {
      plan.flushChain('', known.chain);
      plan.stats.chainsFlushed++;
    }
    plan.chainFlushes.push(name);
  }
}

/** The transaction that programs an empty table with `state` (`nftlink render`): a plan, not sent. */
export function previewTransaction(layout: Layout, cfg: LayoutConfig, state: ProxyState, log: Logger): Transaction {
  layout.adopt?.({ generation: 0, tables: [], chains: [], sets: [], rules: [] });
  const view = KernelView.empty();
  const planner = new SyncPlanner(layout, cfg, new Exclusions(), { has: () => false }, log);
  const plan = planner.newPlan(view);
  void planner.full(state, view, plan); // synchronous without parts (see full)
  return plan.tx;
}
