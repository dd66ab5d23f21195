// Desired versus known elements of one named set or map (kube-proxy's "ensure, then sweep"):
// new keys are added, a key whose value or comment changed is deleted and re-added in the same
// batch (the kernel answers EBUSY/EEXIST to an add that changes data), leftovers are deleted.

import type { NftSet, SetElement } from '../objects.js';
import type { Transaction } from '../transaction.js';
import { elementKey, valuesKey } from '../values.js';
import { renderVerdict, type Verdict } from '../types/verdict.js';

export interface ElementDelta {
  add: SetElement[];
  delete: SetElement[];
}

export class ElementStore {
  private known = new Map<string, { e: SetElement; payload: string }>();
  private desired = new Map<string, { e: SetElement; payload: string }>();
  /** Keys touched by ensure/remove since the last commit; undefined after setDesired (everything). */
  private dirty: Set<string> | undefined = new Set();
  /**
   * After a full commit `known` is the very Map `desired` is (copying 100k entries per full sync
   * was measurable); the first change copies it.
   */
  private shared = false;

  private unshare(): void {
    if (!this.shared) return;
    this.desired = new Map(this.desired);
    this.shared = false;
  }

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

  /** Replaces the desired contents. Throws (naming the element) on values of the wrong type. */
  setDesired(elements: Iterable<SetElement>): void {
    const next = new Map<string, { e: SetElement; payload: string }>();
    for (const e of elements) next.set(elementKey(this.set, e), { e, payload: this.payload(e) });
    this.desired = next;
    this.shared = false;
    this.dirty = undefined;
  }

  /** Adds or updates one desired element (a partial update: only touched keys are compared). */
  ensure(e: SetElement, key: string = elementKey(this.set, e)): void {
    const k = key;
    this.unshare();
    this.desired.set(k, { e, payload: this.payload(e) });
    this.dirty?.add(k);
  }

  /** Removes one desired element by key. */
  remove(e: Pick<SetElement, 'key' | 'keyEnd'>, key: string = elementKey(this.set, e)): void {
    const k = key;
    this.unshare();
    this.desired.delete(k);
    this.dirty?.add(k);
  }

  get size(): number {
    return this.desired.size;
  }

  delta(): ElementDelta {
    const add: SetElement[] = [];
    const del: SetElement[] = [];
    const compare = (k: string): void => {
      const want = this.desired.get(k);
      const have = this.known.get(k);
      if (want && !have) add.push(want.e);
      else if (!want && have) del.push(have.e);
      else if (want && have && have.payload !== want.payload) {
        del.push(have.e);
        add.push(want.e);
      }
    };
    if (this.dirty) {
      for (const k of this.dirty) compare(k);
    } else {
      for (const k of this.desired.keys()) compare(k);
      for (const k of this.known.keys()) if (!this.desired.has(k)) compare(k);
    }
    return { add, delete: del };
  }

  /** Queues the delta (deletes first, then adds); returns how many elements it touches. */
  queue(tx: Transaction): number {
    const d = this.delta();
    if (d.delete.length) tx.delete({ set: this.set, elements: d.delete });
    if (d.add.length) tx.add({ set: this.set, elements: d.add });
    return d.add.length + d.delete.length;
  }

  /** The queued delta was committed: the kernel now holds the desired elements. */
  committed(): void {
    if (this.dirty) {
      for (const k of this.dirty) {
        const want = this.desired.get(k);
        if (want) this.known.set(k, want);
        else this.known.delete(k);
      }
    } else {
      this.known = this.desired;
      this.shared = true;
    }
    this.dirty = new Set();
  }

  /** The commit failed: compare everything next time (the kernel kept what it had). */
  failed(): void {
    this.dirty = undefined;
  }

  /** The kernel's elements, from a dump: the next delta is computed against them. */
  resync(kernel: readonly SetElement[]): void {
    const next = new Map<string, { e: SetElement; payload: string }>();
    for (const e of kernel) next.set(elementKey(this.set, e), { e, payload: this.payload(e) });
    this.unshare();
    this.known = next;
    this.dirty = undefined;
  }

  /** Forget what the kernel holds (the set was recreated, empty). */
  forget(): void {
    this.unshare();
    this.known = new Map();
    this.dirty = undefined;
  }

  /** The desired elements (for rendering the whole ruleset). */
  elements(): SetElement[] {
    return [...this.desired.values()].map((x) => x.e);
  }
}
