// Watches the proxy's tables for changes it did not make (a firewall reload's `nft flush ruleset`,
// an admin's experiment, another program's careless transaction) through the library's monitor, so
// that the proxy repairs them at once instead of at its next sync (up to the full-sync period when
// nothing changes). Its own commits go through the same connection and are told apart by the
// committing socket (MonitorTransaction.self). A lost event means anything may have happened.
//
// It subscribes once the first sync is done, not before: a listener makes the kernel build and
// queue an event for every object the cold start writes (own-commits.ts). What others commit from
// before the first sync reads the tables until the subscription, the generation tells: armed
// before that read, the watch compares the generation once subscribed with the one it armed at plus
// the proxy's own transactions (CountedConnection), and takes a difference as events lost.

import type { Logger } from '../../logging/logger.js';
import type { MonitorChange, MonitoringConnection, NftConnection, NftMonitor, SetElement } from '../../nft/index.js';
import type { CountedConnection } from './own-commits.js';

export type NftFamilyName = 'ip' | 'ip6';

/** Elements another process added or deleted in one set, as the kernel announced them. */
export interface ElementChange {
  verb: 'add' | 'delete';
  elements: readonly SetElement[];
}

/**
 * What of one family's table an outside change touched, for a targeted repair: the chains whose
 * rules changed, the elements changed (by set, in commit order), the sets deleted. `broad`: more
 * than that (the table, a chain, or a set added, or events lost): only a full sync can tell what
 * is there.
 */
export interface RepairScope {
  broad: boolean;
  chains: Set<string>;
  /** Element changes, by set, in the order they were committed. */
  elements: Map<string, ElementChange[]>;
  /** Sets whose changed elements are not known one by one (the monitor could not decode them): read back whole. */
  sets: Set<string>;
  /**
   * Sets deleted. Told apart from the proxy's own sets by the sync (a deleted set of ours needs a
   * full sync): the anonymous set of a deleted rule comes as a deleted set too, and the monitor
   * cannot always tell it is one (its name alone says nothing, Linux 6.18; and the proxy's monitor
   * does not decode the proxy's own commits, which created it).
   */
  deletedSets: Set<string>;
}

export function emptyScope(broad = false): RepairScope {
  return { broad, chains: new Set(), elements: new Map(), sets: new Set(), deletedSets: new Set() };
}

/** Another process changed these families' tables (`lost`: events were lost, assume all). */
export interface ExternalChange {
  families: ReadonlySet<NftFamilyName>;
  /** The kinds of object changed, per family (empty when lost). */
  kinds: ReadonlyMap<NftFamilyName, ReadonlySet<MonitorChange['kind']>>;
  /** The objects changed, per family (every family broad when lost). */
  scopes: ReadonlyMap<NftFamilyName, RepairScope>;
  lost: boolean;
  /** Who committed it, as the kernel names it (absent when lost). */
  by?: { pid?: number; processName?: string };
}

export function canMonitor(nft: NftConnection): nft is MonitoringConnection {
  return typeof (nft as Partial<MonitoringConnection>).monitor === 'function';
}

function familyOf(change: MonitorChange): string {
  switch (change.kind) {
    case 'table':
      return change.table.family;
    case 'chain':
      return change.chain.family;
    case 'rule':
      return change.rule.family;
    default:
      return change.set.family;
  }
}

/** Adds what `change` touched to `scope`: a rule's chain, an element's set, a deleted set, or anything else broad. */
function widen(scope: RepairScope, change: MonitorChange): void {
  if (change.kind === 'rule') scope.chains.add(change.rule.chain);
  else if (change.kind === 'element' && change.undecoded) scope.sets.add(change.set.name);
  else if (change.kind === 'element') {
    let list = scope.elements.get(change.set.name);
    if (!list) scope.elements.set(change.set.name, (list = []));
    list.push({ verb: change.verb, elements: change.elements });
  }
  else if (change.kind === 'set' && change.verb === 'delete') scope.deletedSets.add(change.set.name);
  else scope.broad = true;
}

export class TableWatch {
  private monitor: NftMonitor | undefined;
  private loop: Promise<void> | undefined;
  /** The generation when armed (undefined: it could not be read), and the proxy's own transactions counted then. */
  private armed: { generation: number | undefined; commits: number } | undefined;

  constructor(
    /** The proxy's connection: its commits are counted (and, once subscribed, told apart as `self`). */
    private readonly nft: CountedConnection,
    private readonly table: string,
    private readonly families: readonly NftFamilyName[],
    private readonly onChange: (change: ExternalChange) => void,
    private readonly log: Logger,
  ) {}

  /** Whether the watch has subscribed (start()). */
  get started(): boolean {
    return this.monitor !== undefined;
  }

  /**
   * Before the first sync reads the tables: outside commits from here on are accounted for, by the
   * generation until start() subscribes. Once is enough (later calls keep the first).
   */
  async arm(): Promise<void> {
    if (this.armed || this.started) return;
    const commits = this.nft.commits;
    let generation: number | undefined;
    try {
      generation = await this.nft.generation();
    } catch (err) {
      // Then start() cannot tell what happened before it, and reads everything back.
      this.log.warn('cannot read the ruleset generation', { reason: (err as Error).message });
    }
    this.armed = { generation, commits };
  }

  /**
   * Subscribes: what is committed from then on is seen. Then, if armed, compares the generation
   * with the armed one plus the proxy's own transactions since: a difference is an outside commit
   * the watch was not there for, reported as events lost (everything is read back).
   */
  async start(): Promise<void> {
    if (this.started) return;
    // Its own commits (a full sync's thousands of changes, a repair's cold start) are not even decoded.
    const monitor = this.nft.monitor({ table: this.table, skipOwnChanges: true });
    this.monitor = monitor;
    this.loop = this.watch(monitor).catch((err: Error) => {
      // The watch is a repair path, not the proxy's: the hourly full sync remains the backstop.
      this.log.error('watching the tables for outside changes stopped', { reason: err.message });
    });
    const armed = this.armed;
    if (!armed) return;
    this.armed = undefined;
    try {
      const generation = await this.nft.generation();
      // The kernel's generation is a u32 that wraps (skipping 0): a wrap only costs a full sync.
      const expected = armed.generation === undefined ? undefined : (armed.generation + this.nft.commits - armed.commits) >>> 0;
      if (generation !== expected) this.onChange(this.lostChange());
    } catch (err) {
      this.log.warn('cannot read the ruleset generation', { reason: (err as Error).message });
      this.onChange(this.lostChange());
    }
  }

  /** Anything may have changed in every family: all of it is read back. */
  private lostChange(): ExternalChange {
    return { families: new Set(this.families), kinds: new Map(), scopes: new Map(this.families.map((f) => [f, emptyScope(true)])), lost: true };
  }

  private async watch(monitor: NftMonitor): Promise<void> {
    for await (const ev of monitor) {
      if (ev.type === 'lost') {
        this.onChange(this.lostChange());
        continue;
      }
      if (ev.self) continue;
      const kinds = new Map<NftFamilyName, Set<MonitorChange['kind']>>();
      const scopes = new Map<NftFamilyName, RepairScope>();
      for (const change of ev.changes) {
        const family = familyOf(change) as NftFamilyName;
        if (!this.families.includes(family)) continue;
        let set = kinds.get(family);
        if (!set) kinds.set(family, (set = new Set()));
        set.add(change.kind);
        let scope = scopes.get(family);
        if (!scope) scopes.set(family, (scope = emptyScope()));
        widen(scope, change);
      }
      if (!kinds.size) continue;
      const by = { ...(ev.pid !== undefined ? { pid: ev.pid } : {}), ...(ev.processName !== undefined ? { processName: ev.processName } : {}) };
      this.onChange({ families: new Set(kinds.keys()), kinds, scopes, lost: false, by });
    }
  }

  async stop(): Promise<void> {
    this.monitor?.close();
    await this.loop;
  }
}
