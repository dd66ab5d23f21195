// Desired versus known elements of one named set or map (kube-proxy's "ensure, then sweep"):
// new keys are added, a key whose value or comment changed is deleted and re-added in the same
// batch (the kernel answers EBUSY/EEXIST to an add that changes data), leftovers are deleted.
//
// Memory and time matter here (the proxy keeps 150k elements at 10k services): the maps hold the
// caller's element objects themselves, no wrapper, and what an element carries besides its key is
// compared only when a key is both desired and known with a different object. Values are checked
// when the delta is queued (the transaction's encoder names the set and the element).

import type { NftSet, SetElement } from '../objects.js';
import type { Transaction } from '../transaction.js';
import { elementKey, valuesKey } from '../values.js';
import { renderVerdict, type Verdict } from '../types/verdict.js';

export interface ElementDelta {
  add: SetElement[];
  delete: SetElement[];
}

export class ElementStore {
  private known = new Map<string, SetElement>();
  private desired = new Map<string, SetElement>();
  /** Keys touched by ensure/remove since the last queue (unused while `full`). */
  private readonly dirty = new Set<string>();
  /** The next queue compares every key (after setDesired, a resync, a failure). */
  private full = false;
  /** A queue since the last commit compared every key. */
  private comparedAll = false;
  /**
   * What queued, uncommitted transactions will leave in the kernel, by key (undefined: deleted). A
   * plan may queue several times (a cold start commits in parts); each queue compares against this.
   */
  private readonly pending = new Map<string, SetElement | undefined>();
  /**
   * After a commit that covered nearly everything, `known` is the very Map `desired` is (copying
   * 100k entries per full sync was measurable); the first change copies it.
   */
  private shared = false;

  constructor(readonly set: NftSet) {}

  private unshare(): void {
    if (!this.shared) return;
    this.desired = new Map(this.desired);
    this.shared = false;
  }

  /** What the element carries besides its key; a change means delete + add. */
  private payload(e: SetElement): string {
    let p = '';
    if (this.set.data === 'verdict') p = renderVerdict(e.value as Verdict);
    else if (this.set.data && Array.isArray(e.value)) p = valuesKey(this.set.data, e.value, `map ${this.set.name} value`);
    if (e.comment !== undefined) p += `#${e.comment}`;
    if (e.timeout !== undefined) p += `@${e.timeout}`;
    return p;
  }

  /** Replaces the desired contents. Throws (naming the set) on keys of the wrong type. */
  setDesired(elements: Iterable<SetElement>): void {
    const next = new Map<string, SetElement>();
    for (const e of elements) next.set(elementKey(this.set, e), e);
    this.desired = next;
    this.shared = false;
    this.full = true;
  }

  /** Adds or updates one desired element (a partial update: only touched keys are compared). */
  ensure(e: SetElement, key: string = elementKey(this.set, e)): void {
    this.unshare();
    this.desired.set(key, e);
    if (!this.full) this.dirty.add(key);
  }

  /** Removes one desired element by key. */
  remove(e: Pick<SetElement, 'key' | 'keyEnd'>, key: string = elementKey(this.set, e)): void {
    this.unshare();
    this.desired.delete(key);
    if (!this.full) this.dirty.add(key);
  }

  /** The desired element under this key. */
  get(key: string): SetElement | undefined {
    return this.desired.get(key);
  }

  get size(): number {
    return this.desired.size;
  }

  /** What the kernel holds (or will, once the queued transactions commit) under this key. */
  private held(k: string): SetElement | undefined {
    return this.pending.has(k) ? this.pending.get(k) : this.known.get(k);
  }

  /** The keys the next queue compares. */
  private *candidates(): Iterable<string> {
    if (!this.full) {
      yield* this.dirty;
      return;
    }
    yield* this.desired.keys();
    for (const k of this.known.keys()) if (!this.desired.has(k)) yield k;
    for (const k of this.pending.keys()) if (!this.desired.has(k) && !this.known.has(k)) yield k;
  }

  /** The differences; with `record`, what they will leave in the kernel goes to `pending`. */
  private diff(record: boolean): ElementDelta {
    const add: SetElement[] = [];
    const del: SetElement[] = [];
    for (const k of this.candidates()) {
      const want = this.desired.get(k);
      const have = this.held(k);
      if (want === have) continue;
      if (!have) add.push(want!);
      else if (!want) del.push(have);
      else if (this.payload(have) !== this.payload(want)) {
        del.push(have);
        add.push(want);
      } else continue;
      if (record) this.pending.set(k, want);
    }
    return { add, delete: del };
  }

  delta(): ElementDelta {
    return this.diff(false);
  }

  /**
   * Queues the delta since the last queue (deletes first, then adds); returns how many elements it
   * touches. Until committed() or failed(), the next queue compares against what this one wrote; if
   * the transaction refuses the elements, the store is as after failed().
   */
  queue(tx: Transaction): number {
    try {
      const d = this.diff(true);
      if (this.full) this.comparedAll = true;
      this.dirty.clear();
      this.full = false;
      if (d.delete.length) tx.delete({ set: this.set, elements: d.delete });
      if (d.add.length) tx.add({ set: this.set, elements: d.add });
      return d.add.length + d.delete.length;
    } catch (err) {
      this.failed();
      throw err;
    }
  }

  /** The queued deltas were committed: the kernel now holds what they wrote. */
  committed(): void {
    if (this.dirty.size === 0 && !this.full && (this.comparedAll || this.pending.size * 2 > this.desired.size)) {
      // Everything was compared and queued, so the kernel holds exactly the desired elements: share
      // the map instead of writing most of it again (and, after a resync, let the dump's go).
      this.known = this.desired;
      this.shared = true;
    } else {
      this.unshare();
      for (const [k, e] of this.pending) {
        if (e) this.known.set(k, e);
        else this.known.delete(k);
      }
    }
    this.pending.clear();
    this.comparedAll = false;
  }

  /** The commit failed: compare everything next time (the kernel kept what it had). */
  failed(): void {
    this.pending.clear();
    this.dirty.clear();
    this.full = true;
    this.comparedAll = false;
  }

  /**
   * The kernel's elements, from a dump: the next delta is computed against them. `keys`, parallel
   * to them, are their identities as the dump read them (NftSet.elementKeys).
   */
  resync(kernel: readonly SetElement[], keys?: readonly string[]): void {
    this.unshare();
    const next = new Map<string, SetElement>();
    const keyed = keys !== undefined && keys.length === kernel.length;
    for (let i = 0; i < kernel.length; i++) next.set(keyed ? keys[i]! : elementKey(this.set, kernel[i]!), kernel[i]!);
    this.known = next;
    this.pending.clear();
    this.dirty.clear();
    this.full = true;
  }

  /** Forget what the kernel holds (the set was recreated, empty). */
  forget(): void {
    this.unshare();
    this.known = new Map();
    this.pending.clear();
    this.dirty.clear();
    this.full = true;
  }

  /** The desired elements (for rendering the whole ruleset). */
  elements(): SetElement[] {
    return [...this.desired.values()];
  }
}
