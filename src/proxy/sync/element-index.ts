// Elements of the shared sets and maps, with who contributed them. Two service ports can put the same
// key in a set (one endpoint behind two services, in hairpin-connections): the key stays until its
// last contributor is gone. Feeds each set's ElementStore with partial updates.

import type { NftSet, SetElement } from '../../nft/objects.js';
import { ElementStore } from '../../nft/reconcile/element-store.js';
import type { Transaction } from '../../nft/transaction.js';
import { elementKey } from '../../nft/values.js';
import type { ElementContributions } from '../layout/types.js';

/** Who owns an element: '' for the fixed part of the ruleset, else the service port's id. */
export type Contributor = string;

/**
 * Who put an element in: nearly always one contributor, so that case is the contributor's id alone
 * (the element is the store's desired one) and only a key shared by several (one endpoint behind
 * two services) gets a Map. At 30k services x 5 a Map per element was a quarter of the proxy's
 * memory; a wrapper object per element was most of the rest of the index's.
 */
type Owners = Contributor | Map<Contributor, SetElement>;

interface Entry {
  set: NftSet;
  store: ElementStore;
  /** element key -> its contributors */
  byKey: Map<string, Owners>;
}

/** The element the kernel holds for several owners: the first contributor's. */
function firstElement(o: Map<Contributor, SetElement>): SetElement {
  return o.values().next().value!;
}

export class ElementIndex {
  private readonly sets = new Map<string, Entry>();

  /** Declares a shared set (the layout's base sets); elements of unknown sets are an error. */
  declare(set: NftSet): void {
    if (!this.sets.has(set.name)) this.sets.set(set.name, { set, store: new ElementStore(set), byKey: new Map() });
  }

  /** Forgets a shared set (it was deleted, or will not be declared again). */
  undeclare(name: string): void {
    this.sets.delete(name);
  }

  has(name: string): boolean {
    return this.sets.has(name);
  }

  /** The declared sets (for transactions that refer to them). */
  declaredSets(): NftSet[] {
    return [...this.sets.values()].map((e) => e.set);
  }

  names(): string[] {
    return [...this.sets.keys()];
  }

  private entry(name: string): Entry {
    const e = this.sets.get(name);
    if (!e) throw new Error(`nftlink: the layout added elements to ${name}, which is not one of its shared sets`);
    return e;
  }

  /** Replaces what `who` contributes, everywhere. */
  contribute(who: Contributor, before: ElementContributions | undefined, after: ElementContributions | undefined): void {
    for (const [name, elements] of before ?? []) {
      const e = this.entry(name);
      for (const el of elements) this.withdraw(e, el, who);
    }
    for (const [name, elements] of after ?? []) {
      const e = this.entry(name);
      for (const el of elements) {
        const k = elementKey(e.set, el);
        const owners = e.byKey.get(k);
        if (owners === undefined || owners === who) {
          if (owners === undefined) e.byKey.set(k, who);
          e.store.ensure(el, k);
          continue;
        }
        let map: Map<Contributor, SetElement>;
        if (owners instanceof Map) map = owners;
        else {
          map = new Map([[owners, e.store.get(k)!]]);
          e.byKey.set(k, map);
        }
        map.set(who, el);
        e.store.ensure(firstElement(map), k);
      }
    }
  }

  private withdraw(e: Entry, el: SetElement, who: Contributor): void {
    const k = elementKey(e.set, el);
    const owners = e.byKey.get(k);
    if (owners === undefined) return;
    if (!(owners instanceof Map)) {
      if (owners !== who) return;
      e.byKey.delete(k);
      e.store.remove(el, k);
      return;
    }
    if (!owners.delete(who)) return;
    if (owners.size === 0) {
      e.byKey.delete(k);
      e.store.remove(el, k);
    } else {
      e.store.ensure(firstElement(owners), k);
    }
  }

  /** Queues every store's pending delta; returns how many elements it touches. */
  queue(tx: Transaction): number {
    let n = 0;
    // Verdict maps last: a dispatch element (service-ips, service-nodeports) must never point at a
    // service whose endpoints are not there yet.
    for (const e of this.sets.values()) if (e.set.data !== 'verdict') n += e.store.queue(tx);
    for (const e of this.sets.values()) if (e.set.data === 'verdict') n += e.store.queue(tx);
    return n;
  }

  committed(): void {
    for (const e of this.sets.values()) e.store.committed();
  }

  failed(): void {
    for (const e of this.sets.values()) e.store.failed();
  }

  /** What the kernel holds in a shared set, from a dump. */
  resync(name: string, kernel: readonly SetElement[], keys?: readonly string[]): void {
    this.entry(name).store.resync(kernel, keys);
  }

  /** The element a contributor put under this key, to attribute a kernel refusal to a service. */
  ownersOf(setName: string, el: SetElement): Contributor[] {
    const e = this.sets.get(setName);
    if (!e) return [];
    const owners = e.byKey.get(elementKey(e.set, el));
    if (owners === undefined) return [];
    return owners instanceof Map ? [...owners.keys()] : [owners];
  }

  /** Desired elements of one set (for rendering). */
  elements(name: string): SetElement[] {
    return this.entry(name).store.elements();
  }

  /** Forgets every contribution (a full rebuild follows). */
  clearContributions(): void {
    for (const e of this.sets.values()) {
      e.byKey.clear();
      e.store.setDesired([]);
    }
  }
}
