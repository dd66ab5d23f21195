// The proxy engine: a source feeds the change tracker; a bounded-frequency runner syncs every table
// (one per IP family) from the tracker's snapshot. The first sync waits for the source to be synced;
// it reads the existing tables back and reconciles them with no flush, so traffic to services that
// did not change never stops across a restart. Any failure makes the next sync a full one.

import type { NftConnection, Transaction } from '../nft/index.js';
import type { Logger } from '../logging/logger.js';
import { ChangeTracker } from './model/tracker.js';
import type { InvalidObject, IPFamily, ProxyState } from './model/types.js';
import type { Node } from '../k8s/objects.js';
import { createLayout, type LayoutName } from './layout/index.js';
import type { LayoutConfig } from './layout/types.js';
import type { EventType, ProxySource, SourceProblem } from './source/source.js';
import { FamilySync, type SyncPause, type SyncResult } from './sync/family-sync.js';
import { previewTransaction } from './sync/planner.js';
import { STALE_CHAIN_DELAY_MS } from './sync/stale-chains.js';
import { RepairBackoff } from './sync/repair-backoff.js';
import { canMonitor, emptyScope, TableWatch, type ExternalChange, type NftFamilyName } from './sync/table-watch.js';
import { CountedConnection } from './sync/own-commits.js';
import { BoundedFrequencyRunner } from './sync/runner.js';
import type { LocalhostNodePortProxy } from './localhost/localhost-proxy.js';
import { localhostTargets } from './localhost/targets.js';
import { ConntrackCleaner } from './conntrack/cleaner.js';
import { exposedGc, HeapCompaction } from './heap-compaction.js';
import { ReleasedGarbage } from './released-garbage.js';

const NEEDS_NODE_CIDRS = "the tables' configuration needs this node's Node with podCIDRs (detectLocalMode NodeCIDR), and the source has none";

export interface ProxierOptions {
  source: ProxySource;
  /**
   * Opens the connection the tables are programmed over, once, at start(); the Proxier closes it at
   * stop(). The caller chooses it, as kube-proxy's caller hands it a knftables.Interface: the
   * kernel's (`Nftables.open({ netns })`) or an in-memory one (`FakeNftables`, nftlink/testing).
   */
  connect(): NftConnection;
  /** The network namespace the node's tables live in (conntrack cleanup runs there too). */
  netns?: string;
  nodeName: string;
  /** Every table gets its own instance: a layout may remember where it put things. */
  layout: LayoutName;
  /**
   * One configuration per family to program (ip table for ipv4, ip6 for ipv6). A function is asked
   * at the first sync, once the first lists are in (the node's IPs come from its Node), and again
   * before each sync until it answers: detectLocalMode NodeCIDR needs the Node's podCIDRs first.
   */
  families: LayoutConfig[] | (() => LayoutConfig[] | undefined);
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  /** How often a sync compares everything with the kernel (default FULL_SYNC_PERIOD_MS, 1 h). */
  fullSyncPeriodMs?: number;
  log: Logger;
  /** Called after every sync (metrics, tests). */
  onSync?(report: SyncReport): void;
  /**
   * The localhost NodePort proxy, for these families (empty: off). Its listeners live in the
   * proxy's own namespace, so it needs the proxy to run in the node's namespace (no `netns`).
   */
  localhost?: { families: IPFamily[]; proxy: LocalhostNodePortProxy };
  /** This node's Node object changed (healthz: being deleted; NodeCIDR local detection). */
  onNode?(type: EventType, node: Node): void;
  /** A Service or EndpointSlice event arrived (metrics: the queued timestamp). */
  onChange?(): void;
  /**
   * Watch the tables for other processes' changes and repair them at once (default true; a
   * `--once` run, which ends after its sync, has nothing to repair them for).
   */
  repairOutsideChanges?: boolean;
  /**
   * Another process changed the tables (seen through the connection's monitor, when it has one);
   * the proxy repairs it right away, reading back what it touched or, for a broad change, the
   * whole table (metrics: nftlink_external_changes_total).
   */
  onExternalChange?(change: ExternalChange): void;
  /** A sync repaired an outside change, `ms` after it was seen (nftlink_repairs_total). */
  onRepair?(family: NftFamilyName, ms: number): void;
}

/** What a first sync would send to one family's empty table. */
export interface FamilyPreview {
  family: IPFamily;
  table: string;
  transaction: Transaction;
}

export interface SyncReport {
  results: SyncResult[];
  /** The states this sync programmed, one per family (metrics, service health checks). */
  states: ProxyState[];
  error?: Error;
  /** When the oldest change this sync programmed was queued (healthz, metrics). */
  queuedSince: number | undefined;
  lastChangeTriggerTimes: number[];
  invalid: InvalidObject[];
}

export class Proxier {
  private readonly tracker: ChangeTracker;
  private readonly runner: BoundedFrequencyRunner;
  private nft: NftConnection | undefined;
  private families: FamilySync[] = [];
  private synced = false;
  /** What reading the first lists left has been collected (syncOnce). */
  private firstListsCollected = false;
  /** Resolves when the source has delivered its first complete lists (synced()). */
  private markSourceSynced!: () => void;
  private readonly sourceSynced = new Promise<void>((resolve) => (this.markSourceSynced = resolve));
  private staleTimer: NodeJS.Timeout | undefined;
  /** A full garbage collection once the proxy is idle after a big sync, or between syncs once its RSS has grown (heap-compaction.ts). */
  private readonly compaction: HeapCompaction;
  private watch: TableWatch | undefined;
  private readonly repairBackoff = new RepairBackoff();
  private repairTimer: NodeJS.Timeout | undefined;
  /** Families with an outside change not yet repaired, and when it was seen. */
  private readonly unrepairedSince = new Map<NftFamilyName, number>();
  private readonly conntrack: ConntrackCleaner;
  /** Rejected objects and source problems, counted by kind (kube-proxy logs each once). */
  readonly invalidCounts = new Map<string, number>();
  lastReport: SyncReport | undefined;

  constructor(private readonly opts: ProxierOptions) {
    this.tracker = new ChangeTracker({ nodeName: opts.nodeName });
    this.conntrack = new ConntrackCleaner({ ...(opts.netns !== undefined ? { netns: opts.netns } : {}), log: opts.log });
    this.runner = new BoundedFrequencyRunner(() => this.syncAll(), { minIntervalMs: opts.minSyncPeriodMs, maxIntervalMs: opts.syncPeriodMs });
    this.compaction = new HeapCompaction(exposedGc(), undefined, (c) => opts.log.debug('heap compacted', { ...c }));
  }

  /** Pending changes for healthz and metrics. */
  pending(): ReturnType<ChangeTracker['pendingChanges']> {
    return this.tracker.pendingChanges();
  }

  /**
   * Packets counted by the rules with these comments in one chain, summed over every family's table
   * (the localhost reject counters). Reads that chain's rules over netlink.
   */
  async ruleCounters(comments: readonly string[], chain: string): Promise<Map<string, number>> {
    const out = new Map<string, number>(comments.map((c) => [c, 0]));
    if (!this.nft) return out;
    for (const fam of this.families) {
      const rs = await this.nft.dump({ family: fam.family as 'ip' | 'ip6', table: fam.table, chain });
      for (const r of rs.rules) {
        if (r.comment === undefined || !out.has(r.comment)) continue;
        for (const e of r.exprs) if (e.type === 'counter') out.set(r.comment, out.get(r.comment)! + Number(e.packets ?? 0n));
      }
    }
    return out;
  }

  /** Cumulative change counts, for the *_changes_total metrics. */
  changeTotals(): ReturnType<ChangeTracker['changeTotals']> {
    return this.tracker.changeTotals();
  }

  async start(): Promise<void> {
    this.nft = this.opts.connect();
    // A function is first asked at the first sync: what it needs of the Node comes with the first lists.
    if (typeof this.opts.families !== 'function') this.ensureFamilies();
    await this.opts.source.start({
      service: (type, svc, version) => {
        this.tracker.service(type, svc, version);
        this.opts.onChange?.();
        if (this.synced) this.runner.run();
      },
      endpointSlice: (type, slice, version) => {
        this.tracker.endpointSlice(type, slice, version);
        this.opts.onChange?.();
        if (this.synced) this.runner.run();
      },
      node: (type, node) => {
        this.tracker.node(type, node);
        this.opts.onNode?.(type, node);
        if (this.synced && this.tracker.pendingChanges().endpoints > 0) this.runner.run();
      },
      synced: () => {
        if (this.synced) return;
        this.synced = true;
        this.markSourceSynced();
        this.runner.start();
        this.runner.run();
      },
      problem: (p) => this.problem(p),
    });
  }

  /**
   * `proxy --once`: reads the source to its first complete lists, stops it, and syncs once. Nothing
   * syncs after, so the change tracker lets go of the objects as soon as that sync's state is built
   * (ChangeTracker.forget), and the sync carries the state alone. Instead of start(), not beside
   * it; stop() afterwards. Throws what the source's start throws (a manifest path that does not
   * read); a failed sync is the report's error.
   */
  async runOnce(): Promise<SyncReport> {
    this.nft = this.opts.connect();
    await this.readSourceOnce();
    if (!this.ensureFamilies()) throw new Error(NEEDS_NODE_CIDRS);
    await this.syncOnce(true);
    return this.lastReport!;
  }

  /**
   * Preview mode (`nftlink render`): reads the source once, to its first synced state, and plans
   * what a first sync would write into empty tables; nothing is connected to or written. Instead of
   * start(), not beside it.
   */
  async preview(): Promise<FamilyPreview[]> {
    await this.readSourceOnce();
    const cfgs = typeof this.opts.families === 'function' ? this.opts.families() : this.opts.families;
    if (!cfgs) throw new Error(NEEDS_NODE_CIDRS);
    const snap = this.snapshot();
    this.tracker.forget();
    return cfgs.map((cfg) => ({ family: cfg.family, table: cfg.table, transaction: previewTransaction(createLayout(this.opts.layout), cfg, snap.states[cfg.family], this.opts.log) }));
  }

  /** Reads the source to its first complete lists into the tracker, then stops it. */
  private async readSourceOnce(): Promise<void> {
    const { source } = this.opts;
    await new Promise<void>((resolve, reject) => {
      source
        .start({
          service: (type, svc, version) => this.tracker.service(type, svc, version),
          endpointSlice: (type, slice, version) => this.tracker.endpointSlice(type, slice, version),
          node: (type, node) => {
            this.tracker.node(type, node);
            this.opts.onNode?.(type, node);
          },
          synced: () => resolve(),
          problem: (p) => this.problem(p),
        })
        .catch(reject);
    });
    await source.stop();
  }

  /** The tracker's snapshot, its invalid objects logged and counted. */
  private snapshot(): ReturnType<ChangeTracker['snapshot']> {
    const snap = this.tracker.snapshot();
    for (const inv of snap.invalid) {
      this.count(inv.kind);
      this.opts.log.error('ignoring invalid object', { kind: inv.kind, object: inv.ref, reason: inv.reason });
    }
    return snap;
  }

  /** Resolves after the next sync completes (tests; `--once` runs runOnce instead). */
  async syncNow(): Promise<SyncReport> {
    // The first lists first (informers deliver them after start() returns), as kube-proxy waits
    // for its caches to sync: a sync before them would program an empty model.
    await this.sourceSynced;
    await this.runner.idle();
    await this.syncAll();
    return this.lastReport!;
  }

  /** A refused object counts under its kind (kube-proxy's invalid-object counts); a file that does not read, as Manifest. */
  private problem(p: SourceProblem): void {
    this.count(p.object?.kind ?? 'Manifest');
    this.opts.log.error('cannot read object', { ...(p.object ? { kind: p.object.kind, object: p.object.ref } : {}), origin: p.origin, reason: p.reason });
  }

  private count(kind: string): void {
    this.invalidCounts.set(kind, (this.invalidCounts.get(kind) ?? 0) + 1);
  }

  /** Creates the per-family syncs once their configuration is known; false while it is not. */
  private ensureFamilies(): boolean {
    if (this.families.length) return true;
    const cfgs = typeof this.opts.families === 'function' ? this.opts.families() : this.opts.families;
    if (!cfgs) return false;
    const nft = this.nft;
    if (!nft) throw new Error('nftlink: internal error: a sync before start()');
    // The table watch counts the proxy's own commits (own-commits.ts): the families commit through it.
    const counted = (this.opts.repairOutsideChanges ?? true) && canMonitor(nft) && cfgs.length ? new CountedConnection(nft) : undefined;
    this.families = cfgs.map((cfg) => new FamilySync(counted ?? nft, createLayout(this.opts.layout), cfg, this.opts.log, Date.now, this.opts.fullSyncPeriodMs));
    // Subscribed once the first sync is done (syncOnce): see table-watch.ts.
    if (counted) this.watch = new TableWatch(counted, cfgs[0]!.table, this.families.map((f) => f.family), (c) => this.externalChange(c), this.opts.log);
    return true;
  }

  /**
   * Another process changed our tables: in the families it touched, what it touched is read back and
   * what differs rewritten (everything, for a broad change: targeted-repair.ts) as soon as the
   * backoff allows, without waiting for a model change.
   */
  private externalChange(change: ExternalChange): void {
    const seen = performance.now();
    for (const fam of this.families) {
      if (!change.families.has(fam.family)) continue;
      fam.markDirty(change.scopes.get(fam.family) ?? emptyScope(true));
      if (!this.unrepairedSince.has(fam.family)) this.unrepairedSince.set(fam.family, seen);
    }
    this.opts.onExternalChange?.(change);
    // A repair already on its way sees this change too (it reads back what is marked when it runs).
    if (this.repairTimer) return;
    const wasBackingOff = this.repairBackoff.backingOff;
    const delay = this.repairBackoff.next(Date.now());
    const fields = {
      families: [...change.families],
      kinds: Object.fromEntries([...change.kinds].map(([f, k]) => [f, [...k]])),
      ...(change.lost ? { lost: true } : {}),
      ...(change.by ? { by: change.by } : {}),
    };
    if (!this.repairBackoff.backingOff) this.opts.log.warn('the tables were changed by another process; repairing', fields);
    // Once per fight, not once per change: another writer keeps undoing the rules.
    else if (!wasBackingOff) this.opts.log.error('another process keeps changing the tables; repairs back off', { ...fields, delayMs: delay });
    this.repairTimer = setTimeout(() => {
      this.repairTimer = undefined;
      void this.syncAll();
    }, delay);
    this.repairTimer.unref?.();
  }

  /** Syncs never overlap: a run requested while one is in progress waits for it. */
  private syncing: Promise<void> = Promise.resolve();
  private syncAll(): Promise<void> {
    this.syncing = this.syncing.then(() => this.syncOnce());
    return this.syncing;
  }

  /** `last`: the run ends after this sync (runOnce), which then needs no objects beyond its state. */
  private async syncOnce(last = false): Promise<void> {
    if (!this.ensureFamilies()) {
      this.opts.log.info('not syncing yet: waiting for this node\'s podCIDRs (detectLocalMode NodeCIDR)');
      return;
    }
    // Before anything is read: the watch accounts for outside commits from here on.
    if (this.watch && !this.watch.started) await this.watch.arm();
    // A table read back first (a restart's first sync) starts its read now, while the snapshot
    // builds the state: the dump runs on the addon's thread and in the kernel meanwhile.
    if (this.families.some((f) => f.readPending)) {
      const sizes = this.tracker.sizes();
      for (const fam of this.families) fam.prefetchView(sizes[fam.ipFamily]);
    }
    const snap = this.snapshot();
    // The last sync of a run (runOnce) needs the objects no more. What they took is collected
    // early in the sync (at 100k x 5 the heap would otherwise grow by their 200 MB before V8's
    // next full collection), where the pause holds up least (FamilySync.sync's atPause): in a cold
    // start once its first part is with the kernel, in a restart once the table is read (not
    // while: a pause lets the dump pile up; docs/decisions.md), and there only if V8 has not
    // collected meanwhile (released-garbage.ts). A long-running proxy collects there too: what
    // reading its first lists left (the API's answers and what was parsed from them) is garbage
    // by then, and the sync reuses those pages.
    if (last) this.tracker.forget();
    // Once per process: later full syncs (hourly, repairs) have no such garbage to collect.
    const released = this.firstListsCollected ? undefined : ReleasedGarbage.now();
    const atPause = (where: SyncPause): void => {
      if (!released || this.firstListsCollected) return;
      this.firstListsCollected = true;
      released.collect(where === 'read-back');
    };
    const results: SyncResult[] = [];
    let error: Error | undefined;
    for (const fam of this.families) {
      const family = fam.ipFamily;
      try {
        const r = await fam.sync(snap.states[family], snap.change[family], snap.modelMs[family], atPause);
        results.push(r);
        this.compaction.synced(r, snap.states[family].services.size);
        const since = this.unrepairedSince.get(fam.family);
        // Repaired unless another change came while it ran (seen after it read the kernel back).
        if (since !== undefined && (r.full || r.repaired) && !fam.repairPending) {
          this.unrepairedSince.delete(fam.family);
          this.opts.onRepair?.(fam.family, performance.now() - since);
          // Flows that began while the rules were missing would keep missing them (never throws).
          await this.conntrack.repaired(snap.states[family]);
        }
        this.opts.log.debug('synced', { ...r });
        await this.conntrack.synced(snap.states[family]); // UDP/SCTP flows to endpoints that are gone (never throws)
      } catch (err) {
        error = err as Error;
        this.opts.log.error('sync failed; the next sync is a full one', { family: fam.family, reason: error.message });
      }
    }
    released?.end();
    // The first sync's commits are in: from now on the watch sees outside commits as they come.
    if (this.watch && !this.watch.started) await this.watch.start();
    const localhost = this.opts.localhost;
    if (localhost && localhost.families.length) {
      // Listeners follow the same model the tables were just programmed from.
      const targets = localhost.families.flatMap((f) => localhostTargets(snap.states[f]));
      await localhost.proxy.reconcile(targets);
    }
    const states = this.families.map((f) => snap.states[f.ipFamily]);
    const report: SyncReport = { results, states, queuedSince: snap.queuedSince, lastChangeTriggerTimes: snap.lastChangeTriggerTimes, invalid: snap.invalid };
    if (error) report.error = error;
    this.lastReport = report;
    this.opts.onSync?.(report);
    this.compaction.syncsDone();
    // Come back for stale chains once they may be deleted, and retry soon after a failure.
    if (!last && (error || this.families.some((f) => f.hasStaleChains))) {
      if (this.staleTimer) clearTimeout(this.staleTimer);
      this.staleTimer = setTimeout(() => this.runner.run(), error ? this.opts.minSyncPeriodMs : STALE_CHAIN_DELAY_MS + 50);
      this.staleTimer.unref?.();
    }
  }

  async stop(): Promise<void> {
    this.runner.stop();
    this.compaction.stop();
    for (const family of this.families) family.stop();
    if (this.staleTimer) clearTimeout(this.staleTimer);
    if (this.repairTimer) clearTimeout(this.repairTimer);
    await this.watch?.stop();
    await this.opts.source.stop();
    await this.runner.idle();
    await this.syncing;
    await this.opts.localhost?.proxy.close();
    this.nft?.close();
    this.nft = undefined;
    this.conntrack.close();
  }
}
