// One table's sync (one IP family): the layout's objects for the current model, diffed against what
// the kernel holds, as one transaction. Full syncs compare everything (against a dump, at start and
// after any failure); partial syncs rewrite only the chains of changed service ports and update the
// shared sets element by element. Stale service chains are flushed at once and deleted at least a
// second later, in a transaction of their own: before Linux 6.2 a chain that a just-deleted map
// element pointed to stays busy for a moment.

import { NftCommitError, sameChainBase as sameBase, sameRules, Transaction, type Chain, type NftConnection, type NftSet, type Rule, type Ruleset, type SetElement } from '../../nft/index.js';
import type { Logger } from '../../logging/logger.js';
import type { ProxyState, ServicePortId, StateChange } from '../model/types.js';
import { nftFamily, type Layout, type LayoutConfig, type ServiceObjects } from '../layout/types.js';
import { ElementIndex, type Contributor } from './element-index.js';

/** How long a flushed chain waits before it is deleted. */
export const STALE_CHAIN_DELAY_MS = 1000;

/**
 * As kube-proxy's proxyutil.FullSyncPeriod: at least this often a sync compares everything with a
 * fresh dump, so that what others did to the table (a chain flushed, the table deleted) is
 * repaired even while nothing changes. At 10k services that costs what a restart does (0.6-0.7 s).
 */
export const FULL_SYNC_PERIOD_MS = 3_600_000;

/**
 * A cold start (no chains of ours in the kernel) commits in parts while the next part is built,
 * and the verdict maps' elements (the dispatch maps service-ips, service-nodeports, ..., and the
 * no-endpoint maps) all go in the last part. Nothing routes to a service before its dispatch
 * element exists, so no service is ever half-programmed, and every service becomes reachable at
 * the same commit, as with kube-proxy's one transaction; a resync against a live table stays one
 * atomic transaction. How big a part is (Linux 6.18, perf and A/B runs of the slots layout):
 * - not too big: binding an anonymous set walks the whole transaction (__nft_set_trans_bind), so
 *   one transaction of 10k services in kube-proxy's layout costs tx length x sets; and the last
 *   part's commit is all that is left once planning ends;
 * - not too many: every commit that adds NAT rules validates the table (nft_table_validate): every
 *   chain reachable from a base chain. With each part's dispatch elements in that part, every
 *   service chain committed so far was reachable, so the validations grew quadratic in the table's
 *   size; with the dispatch elements last, the earlier parts validate only the base chains and
 *   the last part walks the table once.
 * Hence parts of COLD_START_OPS, or 1/COLD_START_PARTS of the service ports when that is more
 * (10k: 500 operations; 30k: 1500): with the validations no longer growing, smaller parts cost
 * nothing and hold less in flight. The measurements: docs/decisions.md.
 */
export const COLD_START_OPS = 500;
export const COLD_START_PARTS = 20;

/** Operations per cold-start part for a model of this many service ports. */
export function coldStartPartOps(servicePorts: number): number {
  return Math.max(COLD_START_OPS, Math.ceil(servicePorts / COLD_START_PARTS));
}

export interface SyncResult {
  family: string;
  full: boolean;
  /** Operations in the main transaction (0: nothing was written). */
  operations: number;
  chainsWritten: number;
  chainsFlushed: number;
  chainsDeleted: number;
  elementsChanged: number;
  /** Service ports left out because their objects could not be programmed. */
  excluded: number;
  /** Deleting stale chains failed (kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total). */
  cleanupFailed?: boolean;
  durationMs: number;
}

interface KnownChain {
  chain: Chain;
  ruleCount: number;
  /** The rules, compared when (and only when) a full sync needs it: a cold start never does. */
  rules: readonly Rule[];
  /** The kernel's handles of the rules, when known (a dump, or the echo of a partial sync's write). */
  handles?: (number | undefined)[];
}

function knownChain(chain: Chain, rules: readonly Rule[]): KnownChain {
  const k: KnownChain = { chain, ruleCount: rules.length, rules };
  if (rules.length && rules.every((r) => r.handle !== undefined)) k.handles = rules.map((r) => r.handle);
  return k;
}

/** What the kernel holds, as far as this sync knows: from a dump, then kept current by commits. */
interface KernelView {
  table: boolean;
  chains: Map<string, KnownChain>;
  /** Declarations only: what the sets hold goes to the element index once (below). */
  sets: Map<string, NftSet>;
  /** The dump's elements, until the next full plan hands them to the element index. */
  elements?: Map<string, { elements: SetElement[]; keys: string[] | undefined }>;
}

/** A service port's objects, as the layout built them. */
type Fragment = ServiceObjects;

/** A planned transaction and what the kernel will hold if it commits. */
interface Plan {
  /**
   * The transaction being filled. On a cold start the ones before it were sealed and handed to the
   * kernel, and are not kept: a refusal carries its operation (NftCommitError.operation).
   */
  tx: Transaction;
  /** Operations sealed before `tx`: the global index of tx's first operation. */
  sealedOps: number;
  /** Cut a new transaction at this size (cold start only). */
  chunkOps: number | undefined;
  /** The sealed transaction in flight, and the operations committed. */
  inflight: Promise<void> | undefined;
  committedOps: number;
  /** Rule additions whose handle the kernel echoes back: global operation index -> chain, rule index. */
  echoes: Map<number, { chain: string; rule: number }> | undefined;
  /** Owner of each operation, to attribute a refusal to one service port. */
  owners: (Contributor | undefined)[];
  chainWrites: Map<string, KnownChain>;
  chainFlushes: string[];
  setAdds: NftSet[];
  setDeletes: string[];
  fragments: Map<ServicePortId, Fragment | undefined>;
  /** Names of the layout's shared sets in use once this plan commits. */
  shared: Set<string>;
  stats: Pick<SyncResult, 'chainsWritten' | 'chainsFlushed' | 'elementsChanged'>;
}

function rulesByChain(rules: readonly Rule[]): Map<string, Rule[]> {
  const out = new Map<string, Rule[]>();
  for (const r of rules) {
    if (!out.has(r.chain)) out.set(r.chain, []);
    out.get(r.chain)!.push(r);
  }
  return out;
}

export class FamilySync {
  private kernel: KernelView | undefined;
  private readonly committed = new Map<ServicePortId, Fragment>();
  private readonly index: ElementIndex;
  private readonly stale = new Map<string, number>();
  /** Names of anonymous sets start with this (set when the table is read). */
  private anonPrefix: string | undefined;
  /** The layout's shared sets the kernel holds (as of the last commit). */
  private shared = new Set<string>();
  private needFull = true;
  private lastFullSync = -Infinity;
  /** Service ports the kernel refused, left out until their objects change. */
  private readonly excluded = new Map<ServicePortId, string>();

  constructor(
    /** The connection; undefined for preview(), which only plans. */
    private readonly nft: NftConnection | undefined,
    private readonly layout: Layout,
    private readonly cfg: LayoutConfig,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.index = new ElementIndex((name) => this.layout.keysNeverShared?.(name) ?? false);
  }

  get family(): string {
    return nftFamily(this.cfg.family);
  }

  get table(): string {
    return this.cfg.table;
  }

  private connection(): NftConnection {
    if (!this.nft) throw new Error('nftlink: internal error: a preview FamilySync has no connection');
    return this.nft;
  }

  /** The transaction that programs an empty table with the current model (`nftlink render`). */
  preview(state: ProxyState): Transaction {
    this.kernel = { table: false, chains: new Map(), sets: new Map() };
    this.layout.adopt?.({ generation: 0, tables: [], chains: [], sets: [], rules: [] });
    const plan = this.newPlan(undefined);
    void this.planFull(state, plan); // synchronous without chunks (see planFull)
    return plan.tx;
  }

  /**
   * Keys what a cold start wrote without keying (done in the background after it anyway): for a
   * caller that measures it, or exits right after. Returns the milliseconds it took.
   */
  settleIndex(): number {
    const t0 = performance.now();
    this.index.settle();
    return performance.now() - t0;
  }

  /** The next sync compares everything against a fresh dump. */
  requestFullSync(): void {
    this.needFull = true;
    this.kernel = undefined;
  }

  async sync(state: ProxyState, change: StateChange | undefined): Promise<SyncResult> {
    const started = performance.now();
    if (!this.needFull && this.now() - this.lastFullSync >= FULL_SYNC_PERIOD_MS) this.requestFullSync();
    const cleanup = await this.deleteStaleChains();
    // A service port left out earlier gets another chance once its objects change.
    if (change) for (const id of [...change.changedServices, ...change.changedEndpoints, ...change.removed]) this.excluded.delete(id);
    const result = await this.attempt(state, this.needFull ? undefined : change, 0);
    const out: SyncResult = { ...result, chainsDeleted: cleanup.deleted, durationMs: performance.now() - started };
    if (cleanup.failed) out.cleanupFailed = true;
    return out;
  }

  private async attempt(state: ProxyState, change: StateChange | undefined, attempt: number): Promise<Omit<SyncResult, 'chainsDeleted' | 'durationMs'>> {
    const full = change === undefined;
    if (full && !this.kernel) {
      // The dump runs on the addon's thread and in the kernel: meanwhile, what needs no kernel state.
      const reading = this.readKernel();
      this.layout.prepare?.(state);
      this.kernel = await reading;
    }
    // A cold start (no chains of ours in the kernel) goes in bounded transactions, committed while
    // the next one is planned; anything else is one atomic transaction.
    const coldStart = full && this.kernel!.chains.size === 0;
    const plan = this.newPlan(coldStart ? coldStartPartOps(state.services.size) : undefined);
    try {
      // The table holds none of our elements: some are written before they are keyed (ElementIndex).
      if (coldStart) this.index.coldStart();
      if (full) await this.planFull(state, plan);
      else this.planPartial(state, change, plan);
      await plan.inflight;
      if (plan.tx.size > 0) await this.commitPart(plan, plan.tx);
    } catch (err) {
      // Nothing of the refused transaction was applied (earlier cold-start parts were, which the dump
      // of the next full sync sees); the next sync starts over from a dump.
      this.index.failed();
      this.needFull = true;
      this.kernel = undefined;
      if (!full && attempt < 3) {
        // A partial sync builds on what this engine believes the kernel holds; a refusal may mean
        // the belief is wrong (the table deleted under us: ENOENT for a service that did nothing
        // wrong). As kube-proxy does after any failed sync: a full sync, from a fresh dump, which
        // finds out; only a refusal there can leave a service port out.
        this.log.warn('partial sync refused; retrying as a full sync', { family: this.family, reason: (err as Error).message });
        return this.attempt(state, undefined, attempt + 1);
      }
      const owner = this.ownerOf(plan, err);
      if (owner === undefined || attempt >= 3) throw err;
      // One service port's objects were refused: leave it out and program everyone else now.
      this.excluded.set(owner, (err as Error).message);
      this.log.error('service port left out: the kernel refused its objects', { servicePort: owner, family: this.family, reason: (err as Error).message });
      return this.attempt(state, undefined, attempt + 1);
    }
    this.apply(plan);
    this.needFull = false;
    if (full) this.lastFullSync = this.now();
    // A cold start's unkeyed elements are keyed once the rules are live, off the sync (a sync that
    // comes first keys them itself: the index settles before any read).
    if (coldStart) {
      this.index.coldStartCommitted();
      setImmediate(() => this.index.settle());
    }
    await this.deleteStalePins();
    return { family: this.family, full, operations: plan.sealedOps + plan.tx.size, ...plan.stats, excluded: this.excluded.size };
  }

  /**
   * Pins the packet path wrote to endpoints this sync removed: read back and deleted right after
   * the commit (after it, no new pin can point there). `destroy`, since a pin may expire meanwhile.
   * A failure is logged, not fatal: such a pin times out on its own.
   */
  private async deleteStalePins(): Promise<void> {
    for (const sweep of this.layout.stalePins?.(this.cfg) ?? []) {
      try {
        const { elements } = await this.connection().dumpSetElements(sweep.set);
        const stale = elements.filter((e) => sweep.stale(e));
        if (stale.length) await this.connection().commit(new Transaction().destroy({ set: sweep.set, elements: stale }));
      } catch (err) {
        this.log.warn('cannot delete affinity pins of removed endpoints', { family: this.family, set: sweep.set.name, reason: (err as Error).message });
      }
    }
  }

  /** Commits one transaction of the plan, keeping the rule handles the kernel echoes. */
  private async commitPart(plan: Plan, tx: Transaction): Promise<void> {
    if (this.log.trace) this.log.trace('transaction', { family: this.family, nft: tx.render() });
    const result = await this.connection().commit(tx);
    for (const [index, handle] of result.ruleHandles) {
      const at = plan.echoes?.get(plan.committedOps + index);
      const known = at && plan.chainWrites.get(at.chain);
      if (known) (known.handles ??= [])[at.rule] = handle;
    }
    plan.committedOps += tx.size;
  }

  /** Reads the table back: chains with their rules, sets with elements. */
  private async readKernel(): Promise<KernelView> {
    const rs: Ruleset = await this.connection().dump({ family: this.family as 'ip' | 'ip6', table: this.cfg.table, elementKeys: true });
    const chains = new Map<string, KnownChain>();
    const rules = rulesByChain(rs.rules);
    for (const c of rs.chains) chains.set(c.name, knownChain(c, rules.get(c.name) ?? []));
    this.anonPrefix = `${rs.generation.toString(36)}_`;
    this.layout.adopt?.(rs);
    // The element index keeps what it needs of the elements; the view keeps none (at 10k services
    // holding the dump's 150k decoded elements for the process's life cost 100+ MB).
    const sets = new Map<string, NftSet>();
    const elements: NonNullable<KernelView['elements']> = new Map();
    for (const { elements: els, elementKeys: keys, ...decl } of rs.sets) {
      sets.set(decl.name, decl);
      if (els) elements.set(decl.name, { elements: els, keys });
    }
    return { table: rs.tables.length > 0, chains, sets, elements };
  }

  private fragment(sp: ProxyState['services'] extends ReadonlyMap<string, infer V> ? V : never, state: ProxyState): Fragment | undefined {
    try {
      return this.layout.service(this.cfg, sp, state.endpoints.get(sp.id) ?? []);
    } catch (err) {
      this.layout.release?.(sp.id);
      this.excluded.set(sp.id, (err as Error).message);
      this.log.error('service port left out: its objects cannot be built', { servicePort: sp.id, family: this.family, reason: (err as Error).message });
      return undefined;
    }
  }

  private newPlan(chunkOps?: number): Plan {
    return {
      tx: this.transaction(),
      sealedOps: 0,
      chunkOps,
      inflight: undefined,
      committedOps: 0,
      echoes: undefined,
      owners: [],
      chainWrites: new Map(),
      chainFlushes: [],
      setAdds: [],
      setDeletes: [],
      fragments: new Map(),
      shared: new Set(),
      stats: { chainsWritten: 0, chainsFlushed: 0, elementsChanged: 0 },
    };
  }

  private owned(plan: Plan, owner: Contributor | undefined, queue: () => void): void {
    const before = plan.tx.size;
    queue();
    for (let i = before; i < plan.tx.size; i++) plan.owners[plan.sealedOps + i] = owner;
  }

  /**
   * On a cold start, seals the transaction once it is big enough (or when `force`d, if not empty),
   * with the elements contributed so far, and hands it to the kernel: the addon commits it on a worker thread while this thread plans the
   * next one (2 cores: the kernel's work and ours overlap). One part in flight at a time, in order.
   */
  private async cut(plan: Plan, force = false): Promise<void> {
    if (!plan.chunkOps || (!force && plan.tx.size < plan.chunkOps)) return;
    // The verdict maps' elements wait for the last part (see COLD_START_OPS).
    this.queueElements(plan, force);
    if (plan.tx.size === 0) return;
    const tx = plan.tx;
    plan.sealedOps += tx.size;
    plan.tx = this.transaction();
    await plan.inflight;
    const part = this.commitPart(plan, tx);
    // Observed by the next await of plan.inflight; never an unhandled rejection meanwhile.
    part.catch(() => {});
    plan.inflight = part;
  }

  /**
   * A transaction that knows the types of the sets the kernel holds and the layout declares (its
   * rendering shows what their lookups load), naming anonymous sets after the generation this
   * engine read the table at: unique among every writer of the table so far, and short (see
   * src/nft/netlink/encode/request-encoder.ts). Not bound to the connection (transaction()): a cold
   * start already builds each part while the kernel commits the one before, so both cores are
   * busy, and converting parts on a third thread made it slower (docs/decisions.md).
   */
  private transaction(): Transaction {
    const sets = [...(this.kernel?.sets.values() ?? []), ...this.index.declaredSets()];
    return new Transaction({ sets, ...(this.anonPrefix ? { anonymousSetPrefix: this.anonPrefix } : {}) });
  }

  /** Writes a chain's rules if they differ from what the kernel holds (flush first when it has any). */
  private writeChain(plan: Plan, owner: Contributor | undefined, chain: Chain, rules: readonly Rule[]): void {
    const known = plan.chainWrites.get(chain.name) ?? this.kernel?.chains.get(chain.name);
    const next = knownChain(chain, rules);
    if (
      known &&
      sameBase(known.chain, chain) &&
      !this.stale.has(chain.name) &&
      known.ruleCount === rules.length &&
      sameRules(known.rules, rules)
    ) {
      // The same rules: keep the model's objects (already held by the fragment), not the dump's.
      known.rules = rules;
      return;
    }
    const handle = known?.handles?.[0];
    if (known && handle !== undefined && known.ruleCount === 1 && rules.length === 1 && sameBase(known.chain, chain) && !this.stale.has(chain.name)) {
      // A service chain's one rule (the slots layout's, whenever the endpoint count changes): replaced
      // in place by handle; the kernel keeps the handle (Linux 6.18), so the next change can too.
      this.owned(plan, owner, () => plan.tx.replace({ rule: { ...rules[0]!, handle } }));
      next.handles = [handle];
    } else {
      this.owned(plan, owner, () => {
        if (known && known.ruleCount) plan.tx.flush({ chain });
        rules.forEach((r, i) => {
          if (plan.echoes) plan.echoes.set(plan.sealedOps + plan.tx.size, { chain: chain.name, rule: i });
          plan.tx.add({ rule: r }, plan.echoes ? { echo: true } : undefined);
        });
      });
    }
    plan.chainWrites.set(chain.name, next);
    plan.stats.chainsWritten++;
  }

  private addChainIfMissing(plan: Plan, owner: Contributor | undefined, chain: Chain): void {
    const known = this.kernel?.chains.get(chain.name);
    if (known && sameBase(known.chain, chain)) return;
    this.owned(plan, owner, () => {
      if (known) {
        // A base chain whose hook or priority changed: recreate it (kube-proxy does the same once per start).
        if (known.ruleCount) plan.tx.flush({ chain: known.chain });
        plan.tx.delete({ chain: known.chain });
      }
      plan.tx.add({ chain });
    });
    plan.chainWrites.set(chain.name, knownChain(chain, []));
  }

  private flushStale(plan: Plan, name: string): void {
    const known = plan.chainWrites.get(name) ?? this.kernel?.chains.get(name);
    if (!known || this.stale.has(name)) return;
    if (known.ruleCount) {
      plan.tx.flush({ chain: known.chain });
      plan.stats.chainsFlushed++;
    }
    plan.chainFlushes.push(name);
  }

  /** Plans (and on a cold start, already commits part of) a full sync into `plan`. */
  private async planFull(state: ProxyState, plan: Plan): Promise<void> {
    const kernel = this.kernel!;
    const base = this.layout.base(this.cfg);

    // Service ports gone (or left out) give up what they held before any other is placed.
    for (const [id] of this.committed) {
      if (state.services.has(id) && !this.excluded.has(id)) continue;
      plan.fragments.set(id, undefined);
      this.layout.release?.(id);
    }

    // The shared sets' stores: what the kernel holds is the baseline (a fresh dump's elements;
    // without one, what the stores know), and nobody has contributed yet.
    this.index.clearContributions();
    const resync = (name: string): void => {
      const dumped = kernel.elements?.get(name);
      if (kernel.elements) this.index.resync(name, dumped?.elements ?? [], dumped?.keys);
    };
    for (const name of this.index.names()) resync(name);
    const desiredSets = new Set<string>();
    const addSet = (set: NftSet, owner: Contributor): void => {
      if (desiredSets.has(set.name)) return;
      desiredSets.add(set.name);
      if (kernel.sets.has(set.name)) return;
      this.owned(plan, owner, () => plan.tx.add({ set }));
      plan.setAdds.push(set);
    };
    const declare = (set: NftSet): void => {
      if (desiredSets.has(set.name)) return;
      const known = this.index.has(set.name);
      this.index.declare(set);
      if (!known) resync(set.name);
      addSet(set, '');
    };

    this.owned(plan, '', () => {
      if (!kernel.table) plan.tx.add({ table: base.table });
    });
    for (const s of base.sets) declare(s);
    this.index.contribute(undefined, base.elements);
    const desiredChains = new Set<string>();
    const writeChains = (owner: Contributor, chains: readonly { chain: Chain; rules: readonly Rule[] }[]): void => {
      for (const { chain } of chains) {
        desiredChains.add(chain.name);
        this.addChainIfMissing(plan, owner, chain);
      }
      for (const { chain, rules } of chains) this.writeChain(plan, owner, chain, rules);
    };
    const baseRules = rulesByChain(base.rules);
    writeChains('', base.chains.map((chain) => ({ chain, rules: baseRules.get(chain.name) ?? [] })));

    // Service ports in batches: their objects are built, the shared sets they brought declared,
    // then each one's sets, chains, rules and elements. On a cold start a batch is about one part:
    // it is cut and committed while the next batch is built (dispatch maps last in each part, see
    // queueElements), so the kernel works from the first part on and every part leaves whole
    // services behind. Otherwise (a preview, a resync of a live table) everything is one batch
    // and nothing here awaits, so the plan is complete when this function returns its promise:
    // preview() relies on that.
    const ownSets = new Set<string>();
    let batch: [ServicePortId, Fragment][] = [];
    let batchOps = 0;
    const flush = async (last: boolean): Promise<void> => {
      for (const s of this.layout.sharedSets?.(this.cfg) ?? []) declare(s);
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
      if (plan.chunkOps) await this.cut(plan, last);
      else if (last) this.queueElements(plan);
    };
    for (const sp of state.services.values()) {
      if (this.excluded.has(sp.id)) {
        this.layout.release?.(sp.id);
        continue;
      }
      const f = this.fragment(sp, state);
      if (!f) continue;
      plan.fragments.set(sp.id, f);
      batch.push([sp.id, f]);
      for (const c of f.chains) batchOps += 1 + c.rules.length;
      if (plan.chunkOps && batchOps >= plan.chunkOps) await flush(false);
    }
    this.layout.sweep?.();
    await flush(true);

    // What is in use now decides what is left over.
    const shared = this.layout.sharedSets?.(this.cfg) ?? [];
    plan.shared = new Set(shared.map((s) => s.name));
    const declared = new Set([...base.sets.map((s) => s.name), ...plan.shared]);
    for (const name of this.index.names()) if (!declared.has(name)) this.index.undeclare(name);
    delete kernel.elements;
    for (const name of kernel.chains.keys()) if (!desiredChains.has(name)) this.flushStale(plan, name);
    for (const name of kernel.sets.keys()) {
      if (declared.has(name) || ownSets.has(name)) continue;
      this.owned(plan, '', () => plan.tx.delete({ set: kernel.sets.get(name)! }));
      plan.setDeletes.push(name);
    }
  }

  private planPartial(state: ProxyState, change: StateChange, plan: Plan): void {
    // Partial syncs learn the handles of the rules they write, so that the next change to a
    // one-rule chain is a replace by handle (a cold start does not: 30k echoes for nothing).
    plan.echoes = new Map();
    const ids = new Set([...change.changedServices, ...change.changedEndpoints, ...change.removed]);
    for (const id of ids) {
      const sp = state.services.get(id);
      const f = sp && !this.excluded.has(id) ? this.fragment(sp, state) : undefined;
      if (!f) this.layout.release?.(id);
      plan.fragments.set(id, f);
    }
    // Sets first (rules refer to them), then chains, then their rules, then elements, then leftovers.
    const shared = this.layout.sharedSets?.(this.cfg) ?? [];
    plan.shared = new Set(shared.map((s) => s.name));
    for (const s of shared) {
      this.index.declare(s);
      if (this.kernel?.sets.has(s.name)) continue;
      this.owned(plan, '', () => plan.tx.add({ set: s }));
      plan.setAdds.push(s);
    }
    for (const [id, next] of plan.fragments) {
      const prev = this.committed.get(id);
      const prevSets = new Set(prev?.sets.map((s) => s.name));
      for (const s of next?.sets ?? []) {
        if (prevSets.has(s.name) || this.kernel?.sets.has(s.name)) continue;
        this.owned(plan, id, () => plan.tx.add({ set: s }));
        plan.setAdds.push(s);
      }
    }
    for (const [id, next] of plan.fragments) for (const { chain } of next?.chains ?? []) this.addChainIfMissing(plan, id, chain);
    for (const [id, next] of plan.fragments) {
      for (const { chain, rules } of next?.chains ?? []) this.writeChain(plan, id, chain, rules);
    }
    for (const [id, next] of plan.fragments) this.index.contribute(this.committed.get(id)?.elements, next?.elements);
    this.queueElements(plan);
    for (const [id, next] of plan.fragments) {
      const prev = this.committed.get(id);
      const nextChains = new Set(next?.chains.map((c) => c.chain.name));
      for (const { chain } of prev?.chains ?? []) if (!nextChains.has(chain.name)) this.flushStale(plan, chain.name);
      const nextSets = new Set(next?.sets.map((s) => s.name));
      for (const s of prev?.sets ?? []) {
        if (nextSets.has(s.name)) continue;
        this.owned(plan, id, () => plan.tx.delete({ set: s }));
        plan.setDeletes.push(s.name);
      }
    }
    // Shared sets nobody uses any more go last, after the rules bound to them.
    for (const name of this.shared) {
      const known = this.kernel?.sets.get(name);
      if (plan.shared.has(name) || !known) continue;
      this.owned(plan, '', () => plan.tx.delete({ set: known }));
      plan.setDeletes.push(name);
    }
  }

  private queueElements(plan: Plan, verdictMaps = true): void {
    const before = plan.tx.size;
    plan.stats.elementsChanged += this.index.queue(plan.tx, verdictMaps);
    for (let i = before; i < plan.tx.size; i++) plan.owners[plan.sealedOps + i] = undefined; // resolved per element on failure
  }

  /** The service port a refused operation belongs to, if it belongs to exactly one. */
  private ownerOf(plan: Plan, err: unknown): ServicePortId | undefined {
    if (!(err instanceof NftCommitError) || err.operationIndex < 0) return undefined;
    // The error's index is within the transaction that failed, the committed operations into the plan.
    let owner = plan.owners[plan.committedOps + err.operationIndex];
    const op = err.operation;
    if (owner === undefined && op?.kind === 'element' && err.elementIndex !== undefined && err.elementIndex >= 0) {
      const el = op.elements[err.elementIndex];
      if (el && !this.index.isShared(op.set.name, el)) owner = this.contributorOf(plan, op.set.name, el);
    }
    return owner ? owner : undefined;
  }

  /** The service port whose fragment (this plan's, or the committed one) holds this very element. */
  private contributorOf(plan: Plan, setName: string, el: SetElement): ServicePortId | undefined {
    const holds = (f: Fragment | undefined): boolean => f?.elements.get(setName)?.includes(el) === true;
    for (const [id, f] of plan.fragments) if (holds(f)) return id;
    for (const [id, f] of this.committed) if (holds(f)) return id;
    return undefined;
  }

  private apply(plan: Plan): void {
    const kernel = this.kernel ?? { table: true, chains: new Map(), sets: new Map() };
    kernel.table = true;
    plan.chainWrites.forEach((c, name) => kernel.chains.set(name, c));
    for (const s of plan.setAdds) kernel.sets.set(s.name, s);
    for (const name of plan.setDeletes) {
      kernel.sets.delete(name);
      if (!plan.shared.has(name) && this.shared.has(name)) this.index.undeclare(name);
    }
    this.shared = plan.shared;
    for (const name of plan.chainFlushes) {
      const known = kernel.chains.get(name);
      if (known) kernel.chains.set(name, knownChain(known.chain, []));
      this.stale.set(name, this.now());
    }
    if (this.stale.size) plan.chainWrites.forEach((_, name) => this.stale.delete(name));
    this.kernel = kernel;
    this.index.committed();
    plan.fragments.forEach((f, id) => {
      if (f) this.committed.set(id, f);
      else this.committed.delete(id);
    });
  }

  /** Deletes chains flushed at least STALE_CHAIN_DELAY_MS ago, in their own transaction. */
  private async deleteStaleChains(): Promise<{ deleted: number; failed: boolean }> {
    const due = [...this.stale].filter(([, at]) => this.now() - at >= STALE_CHAIN_DELAY_MS).map(([name]) => name);
    if (!due.length || !this.kernel) return { deleted: 0, failed: false };
    const tx = new Transaction();
    for (const name of due) {
      const known = this.kernel.chains.get(name);
      if (known) tx.delete({ chain: known.chain });
    }
    try {
      if (tx.size) await this.connection().commit(tx);
    } catch (err) {
      // Something still refers to them (or they are gone already): find out with a full sync.
      this.log.warn('deleting stale chains failed; the next sync is a full one', { family: this.family, chains: due.length, reason: (err as Error).message });
      this.stale.clear();
      this.requestFullSync();
      return { deleted: 0, failed: true };
    }
    for (const name of due) {
      this.stale.delete(name);
      this.kernel.chains.delete(name);
    }
    return { deleted: tx.size, failed: false };
  }

  /** Whether service chains are waiting to be deleted (the sync loop comes back for them). */
  get hasStaleChains(): boolean {
    return this.stale.size > 0;
  }
}
