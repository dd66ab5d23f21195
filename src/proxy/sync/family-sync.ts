// One table's sync (one IP family): reads the kernel when it must, has the planner turn the model
// into a plan, the committer send it, and on a refusal retries or leaves one service port out.
// The parts: planner.ts (model + kernel view -> plan, no I/O), committer.ts (parts, pipelining,
// echoed handles), refusals.ts (retry and exclusion), stale-chains.ts (delayed chain deletion),
// pin-sweep.ts (affinity pins of removed endpoints), kernel-view.ts (what the kernel holds).

import type { NftConnection } from '../../nft/index.js';
import type { Logger } from '../../logging/logger.js';
import { stateSize, type StateSize } from '../model/state-size.js';
import type { IPFamily, ProxyState, StateChange } from '../model/types.js';
import { nftFamily, type Layout, type LayoutConfig } from '../layout/types.js';
import { coldStartPartOps } from './cold-start.js';
import { Committer } from './committer.js';
import { KernelView } from './kernel-view.js';
import { deleteStalePins } from './pin-sweep.js';
import type { Plan } from './plan.js';
import { SyncPlanner } from './planner.js';
import { Exclusions, recovery } from './refusals.js';
import { StaleChains } from './stale-chains.js';
import { DirtyObjects, planRepair, readDirty, type RepairRead } from './targeted-repair.js';
import type { RepairScope } from './table-watch.js';

/**
 * As kube-proxy's proxyutil.FullSyncPeriod: at least this often a sync compares everything with a
 * fresh dump, so that what others did to the table (a chain flushed, the table deleted) is
 * repaired even while nothing changes: the backstop behind the monitor's repairs (table-watch.ts).
 * At 10k services that costs what a restart does.
 */
export const FULL_SYNC_PERIOD_MS = 3_600_000;

/** Service ports prepared between two turns of the event loop while the table is read (a few ms). */
const PREPARE_SLICE = 1000;

/**
 * Where a sync pauses for the caller (FamilySync.sync's atPause): a cold start's first part is with
 * the kernel, or a restart's read of the table is in.
 */
export type SyncPause = 'first-part' | 'read-back';

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
  /**
   * What an outside change touched, repaired in this (partial) sync: chains and sets read back,
   * and sets whose touched elements were compared key by key (targeted-repair.ts).
   */
  repaired?: { chains: number; sets: number; elements: number };
  /** From the start of bringing the model up to date (the tracker's snapshot) to the end of the sync. */
  durationMs: number;
  /**
   * Of that, the commits: from handing each transaction to the connection until it returned,
   * summed. A small sync's is the kernel's work for its batch (committed on the JS thread, see
   * docs/decisions.md); a cold start's parts commit while the next is planned, so theirs overlap
   * the planning and include waits for the JS thread.
   */
  commitMs: number;
}

/** How long after a cold start its unkeyed elements are keyed (see attempt). */
const SETTLE_DELAY_MS = 500;

type AttemptResult = Omit<SyncResult, 'chainsDeleted' | 'durationMs'>;

export class FamilySync {
  /** What the kernel holds; undefined when the next sync must read it (a full sync). */
  private view: KernelView | undefined;
  /** That read, started before the sync that takes it (prefetchView). */
  private reading: Promise<KernelView> | undefined;
  private readonly planner: SyncPlanner;
  private readonly committer: Committer;
  private readonly exclusions = new Exclusions();
  private readonly stale: StaleChains;
  private needFull = true;
  /** Counts requestFullSync calls: one that comes while a sync runs keeps the next one full. */
  private fullRequests = 0;
  private lastFullSync = -Infinity;
  /** The background keying after a cold start (see attempt). */
  private settleTimer: NodeJS.Timeout | undefined;
  /** Objects others changed since the last sync, for a targeted repair (targeted-repair.ts). */
  private dirty = new DirtyObjects();

  constructor(
    private readonly nft: NftConnection,
    private readonly layout: Layout,
    private readonly cfg: LayoutConfig,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** FULL_SYNC_PERIOD_MS unless the operator chose (`--full-sync-period`). */
    private readonly fullSyncPeriodMs: number = FULL_SYNC_PERIOD_MS,
  ) {
    this.stale = new StaleChains(now);
    this.planner = new SyncPlanner(layout, cfg, this.exclusions, this.stale, log);
    this.committer = new Committer(nft, log, this.family);
  }

  get family(): 'ip' | 'ip6' {
    return nftFamily(this.cfg.family) as 'ip' | 'ip6';
  }

  /** The model's name of the family: the key of its state in the tracker's snapshot. */
  get ipFamily(): IPFamily {
    return this.cfg.family;
  }

  get table(): string {
    return this.cfg.table;
  }

  /** Whether service chains are waiting to be deleted (the sync loop comes back for them). */
  get hasStaleChains(): boolean {
    return this.stale.size > 0;
  }

  /**
   * Keys what a cold start wrote without keying (done in the background after it anyway): for a
   * caller that measures it, or exits right after. Returns the milliseconds it took.
   */
  settleIndex(): number {
    const t0 = performance.now();
    this.planner.index.settle();
    return performance.now() - t0;
  }

  /**
   * The proxy stops: no background keying (a `--once` run whose second table takes longer than
   * SETTLE_DELAY_MS would otherwise key the first one's elements, 100k x 5 of them, before it exits).
   */
  stop(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
  }

  /** The next sync compares everything against a fresh dump (also when asked while one runs). */
  requestFullSync(): void {
    this.needFull = true;
    this.view = undefined;
    // A read started before this request may predate what prompted it: the sync reads again.
    this.reading = undefined;
    this.fullRequests++;
  }

  /** Whether the next sync reads the table back first, and that read has not started. */
  get readPending(): boolean {
    return this.needFull && !this.view && !this.reading;
  }

  /**
   * Starts the read the next sync needs (readPending), for a state of about `size`: a restart's
   * caller builds the state meanwhile (the tracker's snapshot of every object), while the dump runs
   * on the addon's thread and in the kernel. The next sync takes it.
   */
  prefetchView(size: StateSize): void {
    if (!this.readPending) return;
    this.reading = this.startRead(size);
    // Unobserved until the sync awaits it, which then sees the failure.
    this.reading.catch(() => {});
  }

  /** A read of the table; what others change from now on, the sync after the one that takes it repairs. */
  private startRead(size: StateSize): Promise<KernelView> {
    this.dirty = new DirtyObjects();
    return KernelView.read(this.nft, this.family, this.cfg.table, this.layout, size);
  }

  /** Whether the next sync has something to repair (an outside change seen since this one read the kernel). */
  get repairPending(): boolean {
    return this.needFull || this.dirty.size > 0;
  }

  /**
   * Another process changed these objects: the next sync reads them back and rewrites what differs
   * (or reads everything back, when the change was broad).
   */
  markDirty(scope: RepairScope): void {
    if (scope.broad) this.requestFullSync();
    // Kept while a full sync is due too: one that has read the kernel already did not see it.
    else this.dirty.add(scope);
  }

  /**
   * Syncs the table to `state`. `modelMs`: how long bringing `state` up to date took (the
   * tracker's snapshot), counted in the duration as kube-proxy counts its map updates in its own.
   * `atPause`: called at most once, where a pause of the JavaScript thread holds up least: in a
   * cold start once its first part is with the kernel (the pause overlaps that part's commit), in
   * a sync that reads back a table holding our chains (a restart) once the read is in, before it
   * plans (the dump's replies no longer pile up behind it). The Proxier collects what reading the
   * lists left there (released-garbage.ts).
   */
  async sync(state: ProxyState, change: StateChange | undefined, modelMs = 0, atPause?: (where: SyncPause) => void): Promise<SyncResult> {
    const started = performance.now() - modelMs;
    if (!this.needFull && this.now() - this.lastFullSync >= this.fullSyncPeriodMs) this.requestFullSync();
    const cleanup = await this.deleteStaleChains();
    this.exclusions.changed(change);
    const repair = await this.readDirty();
    const result = await this.attempt(state, this.needFull ? undefined : change, 0, repair, atPause);
    const out: SyncResult = { ...result, chainsDeleted: cleanup.deleted, durationMs: performance.now() - started };
    if (cleanup.failed) out.cleanupFailed = true;
    if (repair && !result.full) out.repaired = { chains: repair.chains.length, sets: repair.sets, elements: repair.elements.length };
    return out;
  }

  /** Reads back what others changed (unless a full sync is due anyway); a full sync when that cannot be targeted. */
  private async readDirty(): Promise<RepairRead | undefined> {
    const dirty = this.dirty;
    if (this.needFull || !this.view || dirty.size === 0) return undefined;
    this.dirty = new DirtyObjects();
    try {
      const read = await readDirty(this.nft, this.family, this.cfg.table, dirty, this.view, this.planner);
      if (!read) this.requestFullSync();
      return read;
    } catch (err) {
      this.log.warn('reading back what another process changed failed; syncing in full', { family: this.family, reason: (err as Error).message });
      this.requestFullSync();
      return undefined;
    }
  }

  private async attempt(state: ProxyState, change: StateChange | undefined, attempt: number, repair?: RepairRead, atPause?: (where: SyncPause) => void): Promise<AttemptResult> {
    const full = change === undefined;
    const requests = this.fullRequests;
    let pause = atPause;
    if (full && !this.view) {
      const reading = this.reading ?? this.startRead(stateSize(state));
      this.reading = undefined;
      this.view = await this.prepareWhileReading(state, reading);
      if (this.view.chains.size > 0) {
        pause = undefined;
        atPause?.('read-back');
      }
    }
    const view = this.view!;
    // A cold start (no chains of ours in the kernel) goes in bounded parts, committed while the
    // next one is planned (cold-start.ts); anything else is one atomic transaction.
    const coldStart = full && view.chains.size === 0;
    const plan = this.planner.newPlan(view, coldStart ? coldStartPartOps(state.services.size) : undefined);
    try {
      // The table holds none of our elements: some are written before they are keyed (ElementIndex).
      if (coldStart) this.planner.index.coldStart();
      let firstPart = coldStart ? pause : undefined;
      const part = async (p: Plan, last: boolean): Promise<void> => {
        await this.part(p, last);
        const then = firstPart;
        firstPart = undefined;
        then?.('first-part');
      };
      if (full) await this.planner.full(state, view, plan, coldStart ? part : undefined);
      else {
        if (repair) planRepair(plan, view, this.planner, repair);
        this.planner.partial(state, change, view, plan);
      }
      await this.committer.finish(plan);
    } catch (err) {
      this.planner.index.failed();
      this.requestFullSync();
      const next = recovery(err, plan, !full, attempt, this.planner.index, this.planner.committedObjects);
      if (next.kind === 'fail') throw err;
      const reason = (err as Error).message;
      if (next.kind === 'full-sync') this.log.warn('partial sync refused; retrying as a full sync', { family: this.family, reason });
      else {
        this.exclusions.exclude(next.servicePort, reason);
        this.log.error('service port left out: the kernel refused its objects', { servicePort: next.servicePort, family: this.family, reason });
      }
      return this.attempt(state, undefined, attempt + 1);
    }
    view.apply(plan);
    this.stale.committed(plan.chainFlushes, plan.chainWrites.keys());
    this.planner.committedPlan(plan);
    // A full sync asked for meanwhile (the table changed by someone else during this one) stays due.
    if (this.fullRequests === requests) this.needFull = false;
    if (full) this.lastFullSync = this.now();
    // A cold start's unkeyed elements, and those a full sync found the kernel holding already
    // (ElementIndex.compareDump), are keyed once the rules are live, off the sync and a moment
    // later, when the proxy is likely idle (a sync that comes first keys them itself: the index
    // settles before any read). Unreferenced: a process that ends after its first sync (--once)
    // does not wait for work nothing will use.
    if (full) {
      if (coldStart) this.planner.index.coldStartCommitted();
      if (this.settleTimer) clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => {
        this.settleTimer = undefined;
        this.planner.index.settle();
      }, SETTLE_DELAY_MS);
      this.settleTimer.unref();
    }
    await deleteStalePins(this.nft, this.layout, this.cfg, this.log);
    return { family: this.family, full, operations: plan.operations, ...plan.stats, excluded: this.exclusions.size };
  }

  /**
   * A cold start's part is planned (the planner cut it: cold-start.ts): it takes the elements
   * contributed so far, the verdict maps' only in the last part, and goes to the kernel.
   */
  private async part(plan: Plan, last: boolean): Promise<void> {
    plan.queueElements(this.planner.index, last);
    await this.committer.send(plan);
  }

  /**
   * What needs no kernel state (Layout.prepare: the chain names' hashes) while the table is read, a
   * slice of service ports at a time, the event loop turning in between. A restart's read takes
   * longer than all of it, and its comparison then finds the names made. A cold start's empty
   * table is read at once: once the read is in and holds none of our chains, the rest is left to
   * the parts, which hash each name as they plan it, and the first part reaches the kernel sooner.
   */
  private async prepareWhileReading(state: ProxyState, reading: Promise<KernelView>): Promise<KernelView> {
    const prepare = this.layout.prepare?.bind(this.layout);
    if (!prepare) return reading;
    let read = false;
    reading.then(
      () => (read = true),
      () => (read = true),
    );
    const ports = [...state.services.values()];
    let at = 0;
    for (; at < ports.length && !read; at += PREPARE_SLICE) {
      prepare(ports.slice(at, at + PREPARE_SLICE));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const view = await reading;
    if (view.chains.size > 0 && at < ports.length) prepare(ports.slice(at));
    return view;
  }

  /** Deletes chains flushed long enough ago; a refusal makes the next sync a full one. */
  private async deleteStaleChains(): Promise<{ deleted: number; failed: boolean }> {
    if (!this.view || !this.stale.size) return { deleted: 0, failed: false };
    try {
      return { deleted: await this.stale.deleteDue(this.nft, this.view), failed: false };
    } catch (err) {
      // Something still refers to them (or they are gone already): find out with a full sync.
      this.log.warn('deleting stale chains failed; the next sync is a full one', { family: this.family, reason: (err as Error).message });
      this.requestFullSync();
      return { deleted: 0, failed: true };
    }
  }
}
