// Elements of the shared sets and maps, as the service ports contribute them. Two service ports can
// put the same key in a set (one endpoint behind two services, in hairpin-connections; one cluster
// IP for every port of a service, in cluster-ips): the key stays until its last contributor is
// gone. Feeds each set's ElementStore with partial updates. A map key with data that two Services
// would claim (a ClusterIP, external or LB IP and port, a NodePort) never gets here twice: the
// model gives it to one of them, the same whatever the order they came in (model/claims.ts).
//
// Who contributed an element is its object: every service port's objects are its own (the layout
// builds them afresh), so the store's element under a key tells whose it is, and only a key that
// several contribute keeps a list of their elements. At 10k services the index then costs the
// store's one Map entry per element and nothing else (an owner Map beside it cost as much again,
// in memory and in the cold start's time).

import { ElementStore, elementHashes, elementKey, sameElement, sameElementHashes, samePayload, type NftSet, type SetElement, type Transaction } from '../../nft/index.js';
import type { ElementContributions } from '../layout/types.js';
import type { DumpedElements } from './kernel-view.js';

/** Who owns an element: '' for the fixed part of the ruleset, else the service port's id. */
export type Contributor = string;

/** One contributor's element under a key it keeps, with other data (ElementIndex.pair). */
interface Replacement {
  set: string;
  key: string;
  old: SetElement;
  next: SetElement;
}

interface Pairing {
  /** Elements of either side that are neither withdrawn nor added as such (kept, or replaced). */
  done: Set<SetElement>;
  replaced: Replacement[];
}

interface Entry {
  set: NftSet;
  /** Declaration order: the order queue() writes sets in. */
  order: number;
  store: ElementStore;
  /** Keys that several contribute -> their elements, in contribution order (the store holds the first). */
  shared: Map<string, SetElement[]>;
  /** A cold start's elements for this set, contributed and not yet queued (see coldStart()). */
  unqueued: SetElement[][];
  /** A cold start's elements queued (and, once the plan succeeds, committed) without being keyed. */
  unkeyed: SetElement[][];
  /** Whether a cold start may write this set's elements before keying them. */
  deferrable: boolean;
  /**
   * A full sync's dump of this set, not given to the store yet: compared with what is contributed
   * by hashes when the set is queued, and keyed only if they differ (resyncFromDump()).
   */
  dumped: DumpedElements | undefined;
  /** The set's next queue flushes it first (its contents were not read: keyDump). */
  flushFirst: boolean;
}

/**
 * Keying every element of a cold start before it is written costs what writing it does (at 10k
 * services the 110k elements of the hairpin set and the bucket maps: 15% of the sync, A/B). Nothing
 * needs those keys until the next sync, so a cold start writes the elements of two kinds of set as
 * they come and keys them afterwards (settle()): sets without data, where a key two service ports
 * both contribute is the same element twice (the kernel takes a repeated add of an equal element
 * as a no-op, Linux 6.18 nft_add_set_elem), and sets whose keys the layout guarantees no two
 * service ports share (`keysNeverShared`: the slots layout's bucket maps, a slot per service chain).
 * Maps with data that can collide (the dispatch and no-endpoint maps) are keyed first, so that the
 * first contributor wins as in any other sync.
 *
 * A full sync against a dump treats every set so: its contributions wait unkeyed, and at its queue
 * are compared with the dump by hashes (compareDump). A restart onto an unchanged table then keys
 * nothing before its commit; a set that differs is keyed and diffed as ever. Maps whose keys can
 * collide lose nothing by it: their hashes match the dump's only if no two contributions give one
 * key different data (the kernel holds one element per key), and a mismatch keys them in order.
 */
export class ElementIndex {
  private readonly sets = new Map<string, Entry>();
  /** declaredSets()'s answer until a set is declared or forgotten (every sync's transactions ask). */
  private declared: NftSet[] | undefined;
  private coldStarting = false;
  /**
   * Whether some set may hold elements unqueued or unkeyed: set where they are added, cleared by
   * settle() and by a pass that finds none. Every contribution asks (settleIfOutstanding), and a
   * pass over the hundreds of sets at each one-endpoint sync was two fifths of its contribute().
   */
  private outstanding = false;
  /** Sets holding a dump not yet compared (Entry.dumped). */
  private dumps = 0;
  private declarations = 0;
  /**
   * The sets whose store may have something to queue, or whose cold-start elements wait: all that
   * queue() visits. A partial sync touches a few of the hundreds of sets; visiting every store for
   * nothing was a tenth of a one-endpoint sync's planning at 10k services.
   */
  private readonly pending = new Set<Entry>();
  /** The sets queued since the last committed() or failed(). */
  private readonly queued = new Set<Entry>();

  constructor(private readonly keysNeverShared: (setName: string) => boolean = () => false) {}

  /** Whether queue() has anything to visit. */
  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** Declares a shared set (the layout's base sets); elements of unknown sets are an error. */
  declare(set: NftSet): void {
    if (this.sets.has(set.name)) return;
    this.declared = undefined;
    const deferrable = set.data === undefined || this.keysNeverShared(set.name);
    this.sets.set(set.name, { set, order: this.declarations++, store: new ElementStore(set), shared: new Map(), unqueued: [], unkeyed: [], deferrable, dumped: undefined, flushFirst: false });
  }

  /** Forgets a shared set (it was deleted, or will not be declared again). */
  undeclare(name: string): void {
    const e = this.sets.get(name);
    if (!e) return;
    this.forgetDump(e);
    this.sets.delete(name);
    this.pending.delete(e);
    this.queued.delete(e);
    this.declared = undefined;
  }

  /**
   * The contributions until coldStartCommitted() (or failed()) are a cold start's, into sets the
   * kernel holds empty: deferrable sets take them unkeyed (see the class comment).
   */
  coldStart(): void {
    this.coldStarting = true;
  }

  /** The cold start's last part is committed: what it wrote unkeyed is keyed at the next settle(). */
  coldStartCommitted(): void {
    this.coldStarting = false;
  }

  /**
   * Keys what a cold start wrote unkeyed: afterwards the index is as if every element had gone
   * through contribute(). Then gives each store's table the room churn would grow it to
   * (ElementStore.reserveChurnRoom). Called after every full sync (in the background) and by
   * anything that reads the index.
   */
  settle(): void {
    // In the middle of a cold start (a background settle of an earlier one, firing between the
    // parts of a second after the table was deleted under us): nothing to do, the cold start began
    // by forgetting every contribution, and its own settle comes after its commit.
    if (this.coldStarting) return;
    for (const e of this.sets.values()) {
      // Contributed and never queued (a plan that ended before its last part): the ordinary path.
      this.keyDump(e);
      for (const list of e.unqueued) this.add(e, list);
      e.unqueued = [];
      for (const list of e.unkeyed) {
        for (const el of list) {
          const k = elementKey(e.set, el);
          const held = e.store.get(k);
          if (held === undefined) e.store.adoptWritten(el, k);
          else this.share(e, k, held, el);
        }
      }
      e.unkeyed = [];
      // Now that the store holds every element: room for the churn to come (map-room.ts).
      e.store.reserveChurnRoom();
    }
    this.outstanding = false;
  }

  /** settle() if a cold start left anything unkeyed (every read of the index starts with it). */
  private settleIfOutstanding(): void {
    if (this.coldStarting || !this.outstanding) return;
    for (const e of this.sets.values()) if (e.unkeyed.length || e.unqueued.length) return this.settle();
    this.outstanding = false;
  }

  has(name: string): boolean {
    return this.sets.has(name);
  }

  /** The declared sets (for transactions that refer to them). */
  declaredSets(): readonly NftSet[] {
    return (this.declared ??= [...this.sets.values()].map((e) => e.set));
  }

  names(): string[] {
    return [...this.sets.keys()];
  }

  private entry(name: string): Entry {
    const e = this.sets.get(name);
    if (!e) throw new Error(`nftlink: the layout added elements to ${name}, which is not one of its shared sets`);
    return e;
  }

  /**
   * Replaces what a contributor contributes, everywhere: its elements before and after. What it
   * keeps (same key, same payload) stays as it is: `after` gets back the object from `before`, and
   * nothing is withdrawn or added for it. A scaled service port keeps most of its elements, and a
   * withdrawal and a contribution cost several lookups each in Maps of 100k+ keys (1-1.5 µs apiece
   * at 10k services).
   */
  contribute(before: ElementContributions | undefined, after: ElementContributions | undefined): void {
    if (before === undefined && (this.coldStarting || this.dumps > 0)) {
      after?.forEach((elements, name) => {
        const e = this.entry(name);
        if ((e.deferrable && this.coldStarting) || e.dumped) {
          e.unqueued.push(elements);
          this.outstanding = true;
          this.pending.add(e);
        } else this.add(e, elements);
      });
      return;
    }
    this.settleIfOutstanding();
    const paired = before && after ? this.pair(before, after) : undefined;
    before?.forEach((elements, name) => {
      const e = this.entry(name);
      for (const el of elements) if (!paired?.done.has(el)) this.withdraw(e, el);
    });
    if (paired) for (const r of paired.replaced) this.replace(this.entry(r.set), r.key, r.old, r.next);
    after?.forEach((elements, name) => this.add(this.entry(name), elements, paired?.done));
  }

  private add(e: Entry, elements: readonly SetElement[], done?: Set<SetElement>): void {
    this.keyDump(e);
    if (elements.length) this.pending.add(e);
    for (const el of elements) if (!done?.has(el)) this.addOne(e, el);
  }

  private addOne(e: Entry, el: SetElement, k = elementKey(e.set, el)): void {
    const held = e.store.get(k);
    if (held === undefined) e.store.ensureNew(el, k);
    else this.share(e, k, held, el);
  }

  /**
   * A contributor's element under a key it keeps, with other data (an endpoint's slot given to
   * another endpoint): written over the old one in the store, the key's entry kept. A delete and an
   * add of the same key left a deleted entry in the Map's table at every such change, and those
   * doubled the bucket maps' tables a few minutes into churn (why: map-room.ts). Shared keys go
   * the long way.
   */
  private replace(e: Entry, k: string, old: SetElement, next: SetElement): void {
    this.keyDump(e);
    this.pending.add(e);
    if (!e.shared.has(k) && e.store.get(k) === old) return e.store.ensure(next, k);
    this.withdraw(e, old);
    this.addOne(e, next, k);
  }

  private share(e: Entry, k: string, held: SetElement, el: SetElement): void {
    let list = e.shared.get(k);
    if (!list) e.shared.set(k, (list = [held]));
    list.push(el);
  }

  /**
   * Puts back in `after` every element of `before` it has an equal of (key and payload), and pairs
   * the elements of both under one key with different data. `done` holds both sides of each: the
   * elements neither withdrawn nor added as such.
   */
  private pair(before: ElementContributions, after: ElementContributions): Pairing {
    const done = new Set<SetElement>();
    const replaced: Replacement[] = [];
    before.forEach((olds, name) => {
      const news = after.get(name);
      if (!news?.length || !olds.length) return;
      // A rebuilt service port gives its elements in the same order: pair them by position first,
      // value by value, and encode the keys of only what is left (an added or a moved element).
      const unpaired: number[] = [];
      for (let i = 0; i < news.length; i++) {
        const o = olds[i];
        if (o !== undefined && sameElement(o, news[i]!)) {
          news[i] = o;
          done.add(o);
        } else unpaired.push(i);
      }
      if (unpaired.length === 0) return;
      const e = this.entry(name);
      const byKey = new Map<string, SetElement>();
      for (const o of olds) if (!done.has(o)) byKey.set(elementKey(e.set, o), o);
      if (byKey.size === 0) return;
      for (const i of unpaired) {
        const next = news[i]!;
        const k = elementKey(e.set, next);
        const o = byKey.get(k);
        if (o === undefined) continue;
        byKey.delete(k);
        done.add(o);
        if (samePayload(o, next)) news[i] = o;
        else {
          done.add(next);
          replaced.push({ set: name, key: k, old: o, next });
        }
      }
    });
    return { done, replaced };
  }

  private withdraw(e: Entry, el: SetElement): void {
    this.pending.add(e);
    const k = elementKey(e.set, el);
    const list = e.shared.get(k);
    if (!list) {
      if (e.store.get(k) === el) e.store.remove(el, k);
      return;
    }
    const at = list.indexOf(el);
    if (at < 0) return;
    list.splice(at, 1);
    if (list.length === 1) e.shared.delete(k);
    if (at === 0) e.store.ensure(list[0]!, k);
  }

  /**
   * Queues every store's pending delta (with `verdictMaps` false, all but the verdict maps', which
   * keep theirs for a later queue); returns how many elements it touches.
   */
  queue(tx: Transaction, verdictMaps = true): number {
    if (this.pending.size === 0) return 0;
    let n = 0;
    const queue = (e: Entry): void => {
      this.pending.delete(e);
      this.queued.add(e);
      if (e.dumped) this.compareDump(e);
      if (e.flushFirst) {
        tx.flush({ set: e.set });
        e.flushFirst = false;
      }
      if (e.unqueued.length) {
        // One operation per set, as the store's delta is (not one per service port's list).
        const elements = e.unqueued.length === 1 ? e.unqueued[0]! : e.unqueued.flat();
        e.unqueued = [];
        if (elements.length) {
          tx.add({ set: e.set, elements });
          n += elements.length;
          e.unkeyed.push(elements);
          this.outstanding = true;
        }
      }
      n += e.store.queue(tx);
    };
    // In declaration order, and verdict maps last: a dispatch element (service-ips,
    // service-nodeports) must never point at a service whose endpoints are not there yet.
    const due = [...this.pending].sort((a, b) => a.order - b.order);
    for (const e of due) if (e.set.data !== 'verdict') queue(e);
    if (verdictMaps) for (const e of due) if (e.set.data === 'verdict') queue(e);
    return n;
  }

  /**
   * A dumped set at its queue: if what was contributed hashes the same as what the kernel holds,
   * there is nothing to write, and the contributions are keyed later as a cold start's are (the
   * kernel holds them: settle() adopts them). Else the dump and the contributions are keyed, and
   * the store writes the difference.
   */
  private compareDump(e: Entry): void {
    const dumped = e.dumped!;
    // Left out of the dump: nothing to compare; emptied and written whole (keyDump).
    if (dumped.omitted) return this.keyDump(e);
    const mine = elementHashes(e.set, e.unqueued);
    // The dump's own hashes when it gave them (its elements are then not decoded at all).
    const theirs = mine && (dumped.elementHashes ?? elementHashes(e.set, [dumped.elements ?? []]));
    if (!mine || !theirs || !sameElementHashes(mine, theirs)) {
      this.keyDump(e);
      const lists = e.unqueued;
      e.unqueued = [];
      for (const list of lists) this.add(e, list);
      return;
    }
    this.forgetDump(e);
    e.store.resync([]);
    // A loop, not push(...): one list per service port, 100k and more of them.
    for (const list of e.unqueued) e.unkeyed.push(list);
    if (e.unkeyed.length) this.outstanding = true;
    e.unqueued = [];
  }

  /**
   * Gives a dumped set's elements to its store (keyed): anything but a match at queue() needs them
   * there. A set left out of the dump is flushed at its next queue instead, and the store starts
   * from nothing.
   */
  private keyDump(e: Entry): void {
    const dumped = e.dumped;
    if (!dumped) return;
    this.forgetDump(e);
    if (dumped.omitted) {
      e.flushFirst = true;
      e.store.resync([]);
    } else e.store.resync(dumped.elements ?? [], dumped.elementKeys);
  }

  private forgetDump(e: Entry): void {
    if (e.dumped) this.dumps--;
    e.dumped = undefined;
  }

  committed(): void {
    for (const e of this.queued) e.store.committed();
    this.queued.clear();
  }

  /** The transactions queued since the last committed() were refused: the next full sync reads the kernel again. */
  failed(): void {
    this.coldStarting = false;
    this.queued.clear();
    for (const e of this.sets.values()) {
      this.forgetDump(e);
      e.flushFirst = false;
      e.unqueued = [];
      e.unkeyed = [];
      e.store.failed();
      // Compared in full at the next queue (ElementStore.failed).
      this.pending.add(e);
    }
  }

  /** What the kernel holds in a shared set, from a dump of it (compared in full at the next queue). */
  resync(name: string, kernel: readonly SetElement[], keys?: readonly string[]): void {
    const e = this.entry(name);
    e.unqueued = [];
    e.unkeyed = [];
    this.forgetDump(e);
    e.flushFirst = false;
    e.store.resync(kernel, keys);
    this.pending.add(e);
  }

  /**
   * What the kernel holds in a shared set, from the dump a full sync starts with (all its
   * contributions follow, unkeyed). Outside a cold start a set keeps the dump aside: the
   * contributions are compared with it by hashes when the set is queued (compareDump), so that a
   * restart onto an unchanged table keys nothing before its commit.
   */
  resyncFromDump(name: string, dumped: DumpedElements): void {
    const e = this.entry(name);
    // A set left out of the dump is written whole, unkeyed, as a cold start writes (also in one).
    if (dumped.omitted && !e.deferrable) throw new Error(`nftlink: set ${name} was left out of the dump, but its elements cannot be written before they are keyed`);
    if (!dumped.omitted && this.coldStarting) return this.resync(name, dumped.elements ?? [], dumped.elementKeys);
    e.unqueued = [];
    e.unkeyed = [];
    this.forgetDump(e);
    e.dumped = dumped;
    this.dumps++;
    this.pending.add(e);
  }

  /** Whether several contribute this element's key (a refusal of it is nobody's alone). */
  isShared(setName: string, el: SetElement): boolean {
    this.settleIfOutstanding();
    const e = this.sets.get(setName);
    return e !== undefined && e.shared.has(elementKey(e.set, el));
  }

  /** The desired element under one key of a shared set (a targeted repair compares it with the kernel's). */
  desired(name: string, key: string): SetElement | undefined {
    this.settleIfOutstanding();
    return this.sets.get(name)?.store.get(key);
  }

  /** Desired elements of one set (for rendering). */
  elements(name: string): SetElement[] {
    this.settleIfOutstanding();
    return this.entry(name).store.elements();
  }

  /** Forgets every contribution (a full rebuild follows). */
  clearContributions(): void {
    for (const e of this.sets.values()) {
      this.forgetDump(e);
      e.flushFirst = false;
      e.shared.clear();
      e.unqueued = [];
      e.unkeyed = [];
      e.store.setDesired([]);
      this.pending.add(e);
    }
  }
}
