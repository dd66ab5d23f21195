// Desired versus known elements of one named set or map (kube-proxy's "ensure, then sweep"):
// new keys are added, a key whose value or comment changed is deleted and re-added in the same
// batch (the kernel answers EBUSY/EEXIST to an add that changes data), leftovers are deleted.

import type { NftSet, SetElement } from '../objects.js';
import type { Transaction } from '../transaction.js';
import { bytesKey, elementKey, encodeValues } from '../values.js';
import { renderVerdict, type Verdict } from '../types/verdict.js';

export interface ElementDelta {
  add: SetElement[];
  delete: SetElement[];
}

export class ElementStore {
  private known = new Map<string, { e: SetElement; payload: string }>();
  private desired = new Map<string, { e: SetElement; payload: string }>();

  constructor(readonly set: NftSet) {}

  /** What the element carries besides its key; a change means delete + add. */
  private payload(e: SetElement): string {
    let p = '';
    if (this.set.data === 'verdict') p = renderVerdict(e.value as Verdict);
    else if (this.set.data && Array.isArray(e.value)) p = bytesKey(encodeValues(this.set.data, e.value, `map ${this.set.name} value`));
    if (e.comment !== undefined) p += `#${e.comment}`;
    if (e.timeout !== undefined) p += `@${e.timeout}`;
    return p;
  }

  /** Replaces the desired contents. Throws (naming the element) on values of the wrong type. */
  setDesired(elements: Iterable<SetElement>): void {
    const next = new Map<string, { e: SetElement; payload: string }>();
    for (const e of elements) next.set(elementKey(this.set, e), { e, payload: this.payload(e) });
    this.desired = next;
  }

  /** Adds or updates one desired element. */
  ensure(e: SetElement): void {
    this.desired.set(elementKey(this.set, e), { e, payload: this.payload(e) });
  }

  /** Removes one desired element by key. */
  remove(e: Pick<SetElement, 'key' | 'keyEnd'>): void {
    this.desired.delete(elementKey(this.set, e));
  }

  get size(): number {
    return this.desired.size;
  }

  delta(): ElementDelta {
    const add: SetElement[] = [];
    const del: SetElement[] = [];
    for (const [k, want] of this.desired) {
      const have = this.known.get(k);
      if (!have) add.push(want.e);
      else if (have.payload !== want.payload) {
        del.push(have.e);
        add.push(want.e);
      }
    }
    for (const [k, have] of this.known) if (!this.desired.has(k)) del.push(have.e);
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
    this.known = new Map(this.desired);
  }

  /** The kernel's elements, from a dump: the next delta is computed against them. */
  resync(kernel: readonly SetElement[]): void {
    const next = new Map<string, { e: SetElement; payload: string }>();
    for (const e of kernel) next.set(elementKey(this.set, e), { e, payload: this.payload(e) });
    this.known = next;
  }

  /** Forget what the kernel holds (after a failed commit, or when the set was recreated). */
  forget(): void {
    this.known = new Map();
  }
}
