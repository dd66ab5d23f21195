// Desired versus known elements of one named set or map (kube-proxy's "ensure, then sweep"):
// new keys are added, a key whose value or comment changed is deleted and re-added in the same
// batch (the kernel answers EBUSY/EEXIST to an add that changes data), leftovers are deleted.
//
// Memory and time matter here (the proxy keeps 120k elements at 10k services and touches each on
// a cold start): the store keeps one Map of the caller's element objects, no wrapper and no copy
// of what the kernel holds. Between queues the kernel holds (or will, once the queued transactions
// commit) exactly the desired elements, except for the keys touched since, whose held element is
// noted when they are first touched. Only a full compare (after a dump, a wholesale replacement or
// a failure) keeps the kernel's elements beside, until it is queued. What an element carries
// besides its key is compared only when a key is both desired and held with a different object.
// Values are checked when the delta is queued (the transaction's encoder names set and element).

import { samePayload } from './element-equality.js';
import type { NftSet, SetElement } from '../objects.js';
import type { Transaction } from '../transaction.js';
import { elementKey, valuesKey } from '../values.js';
import { renderVerdict, type Verdict } from '../types/verdict.js';
import { reserveRehashRoom } from './map-room.js';

/** What the padding keys of reserveChurnRoom() hold while they exist (never read). */
const PAD: SetElement = Object.freeze({ key: [] });

export interface ElementDelta {
  add: SetElement[];
  delete: SetElement[];
}

export class ElementStore {
  private desired = new Map<string, SetElement>();
  /** reserveChurnRoom() has grown this `desired` Map's table. */
  private roomReserved = false;
  /** The kernel's elements while a full compare is due: the next queue compares every key against them. */
  private baseline: Map<string, SetElement> | undefined;
  /** Keys touched since the last queue that the kernel holds: key -> the element it holds. */
  private readonly touched = new Map<string, SetElement>();
  /** Keys touched since the last queue that the kernel does not hold. */
  private readonly fresh = new Set<string>();
  /** Queued, not yet committed: key and what the kernel held before, in queue order (for failed()). */
  private undoKeys: string[] = [];
  private undoHeld: (SetElement | undefined)[] = [];

  constructor(readonly set: NftSet) {}

  /** What the element carries besides its key; a change means delete + add. */
  private payload(e: SetElement): string {
    let p = '';
    if (this.set.data === 'verdict') p = renderVerdict(e.value as Verdict);
    else if (this.set.data && Array.isArray(e.value)) p = valuesKey(this.set.data, e.value, `map ${this.set.name} value`);
    if (e.comment !== undefined) p += `#${e.comment}`;
    if (e.timeout !== undefined) p += `@${e.timeout}`;
    return p;
  }

  /**
   * Notes what the kernel holds under a key before its first change since the last queue: the
   * desired element, since between queues the kernel holds exactly those for untouched keys.
   * `absent`: the caller has just found no desired element under the key.
   */
  private touch(k: string, absent = false): void {
    if (this.baseline || this.touched.has(k) || this.fresh.has(k)) return;
    const held = absent ? undefined : this.desired.get(k);
    if (held === undefined) this.fresh.add(k);
    else this.touched.set(k, held);
  }

  /** A full compare is due against `held` (what the kernel holds); nothing is touched since. */
  private rebase(held: Map<string, SetElement>): void {
    this.baseline = held;
    this.touched.clear();
    this.fresh.clear();
  }

  /** What the kernel holds (or will, once the queued transactions commit), key by key. */
  private heldMap(): Map<string, SetElement> {
    if (this.baseline) return this.baseline;
    if (this.touched.size === 0 && this.fresh.size === 0) return this.desired;
    const held = new Map(this.desired);
    for (const k of this.fresh) held.delete(k);
    for (const [k, e] of this.touched) held.set(k, e);
    return held;
  }

  /** Replaces the desired contents (compared in full at the next queue). Throws (naming the set) on keys of the wrong type. */
  setDesired(elements: Iterable<SetElement>): void {
    const next = new Map<string, SetElement>();
    for (const e of elements) next.set(elementKey(this.set, e), e);
    this.rebase(this.heldMap());
    this.desired = next;
    this.roomReserved = false;
  }

  /**
   * Grows the table of desired elements, once per table, to the size it settles at when keys keep
   * being deleted and added (map-room.ts): for a store whose keys churn, memory that stays flat
   * instead of doubling minutes later. Stores under a few hundred elements are left alone.
   */
  reserveChurnRoom(): void {
    if (this.roomReserved) return;
    this.roomReserved = true;
    reserveRehashRoom(this.desired, PAD);
  }

  /** Adds or updates one desired element (a partial update: only touched keys are compared). */
  ensure(e: SetElement, key: string = elementKey(this.set, e)): void {
    this.touch(key);
    this.desired.set(key, e);
  }

  /** ensure() of a key the caller just found absent (get() gave undefined): one lookup fewer. */
  ensureNew(e: SetElement, key: string): void {
    this.touch(key, true);
    this.desired.set(key, e);
  }

  /**
   * An element the kernel holds already, written without this store (a cold start's, keyed after
   * its commit: ElementIndex.settle): desired, and nothing to queue for it.
   */
  adoptWritten(e: SetElement, key: string): void {
    this.desired.set(key, e);
  }

  /** Removes one desired element by key. */
  remove(e: Pick<SetElement, 'key' | 'keyEnd'>, key: string = elementKey(this.set, e)): void {
    this.touch(key);
    this.desired.delete(key);
  }

  /** The desired element under this key. */
  get(key: string): SetElement | undefined {
    return this.desired.get(key);
  }

  get size(): number {
    return this.desired.size;
  }

  /** The differences since the last queue; with `record`, noted for failed(). */
  private diff(record: boolean): ElementDelta {
    const add: SetElement[] = [];
    const del: SetElement[] = [];
    const compare = (k: string, want: SetElement | undefined, have: SetElement | undefined): void => {
      if (want === have) return;
      if (!have) add.push(want!);
      else if (!want) del.push(have);
      // samePayload first: no text built for the common case (a restart compares 120k elements).
      else if (!samePayload(have, want) && this.payload(have) !== this.payload(want)) {
        del.push(have);
        add.push(want);
      } else return;
      if (record) {
        this.undoKeys.push(k);
        this.undoHeld.push(have);
      }
    };
    // forEach, not for-of: no [key, value] array per entry (120k of them on a cold start).
    const base = this.baseline;
    if (base) {
      const empty = base.size === 0;
      this.desired.forEach((want, k) => compare(k, want, empty ? undefined : base.get(k)));
      base.forEach((have, k) => {
        if (!this.desired.has(k)) compare(k, undefined, have);
      });
    } else {
      this.touched.forEach((have, k) => compare(k, this.desired.get(k), have));
      this.fresh.forEach((k) => compare(k, this.desired.get(k), undefined));
    }
    return { add, delete: del };
  }

  delta(): ElementDelta {
    return this.diff(false);
  }

  /**
   * Queues the delta since the last queue (deletes first, then adds); returns how many elements it
   * touches. A plan may queue several times (a cold start commits in parts): each queue starts
   * from what the previous ones wrote. If the transaction refuses the elements, the store is as
   * after failed().
   */
  queue(tx: Transaction): number {
    // Nothing changed since the last queue (most of a partial sync's hundreds of stores).
    if (this.baseline === undefined && this.touched.size === 0 && this.fresh.size === 0) return 0;
    try {
      const d = this.diff(true);
      this.baseline = undefined;
      this.touched.clear();
      this.fresh.clear();
      if (d.delete.length) tx.delete({ set: this.set, elements: d.delete });
      if (d.add.length) tx.add({ set: this.set, elements: d.add });
      return d.add.length + d.delete.length;
    } catch (err) {
      this.failed();
      throw err;
    }
  }

  /** The queued deltas were committed: the kernel holds what they wrote. */
  committed(): void {
    this.undoKeys = [];
    this.undoHeld = [];
  }

  /**
   * The commit failed: the kernel kept what it had before the queued deltas. The next queue
   * compares everything against that.
   */
  failed(): void {
    const held = new Map(this.heldMap());
    // Latest first, so that a key queued in several parts ends at what it held before the first.
    for (let i = this.undoKeys.length - 1; i >= 0; i--) {
      const e = this.undoHeld[i];
      if (e) held.set(this.undoKeys[i]!, e);
      else held.delete(this.undoKeys[i]!);
    }
    this.committed();
    this.rebase(held);
  }

  /**
   * The kernel's elements, from a dump: the next delta is computed against them. `keys`, parallel
   * to them, are their identities as the dump read them (NftSet.elementKeys).
   */
  resync(kernel: readonly SetElement[], keys?: readonly string[]): void {
    const next = new Map<string, SetElement>();
    const keyed = keys !== undefined && keys.length === kernel.length;
    for (let i = 0; i < kernel.length; i++) next.set(keyed ? keys[i]! : elementKey(this.set, kernel[i]!), kernel[i]!);
    this.committed();
    this.rebase(next);
  }

  /** Forget what the kernel holds (the set was recreated, empty). */
  forget(): void {
    this.resync([]);
  }

  /** The desired elements (for rendering the whole ruleset). */
  elements(): SetElement[] {
    return [...this.desired.values()];
  }
}
