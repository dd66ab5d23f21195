// A targeted repair: what an outside change touched (the monitor names it: a rule's chain, the
// elements themselves; table-watch.ts) is compared with the model, and only what differs there is
// rewritten. One element deleted from a 10k-service table costs a write of that one element, not
// a dump of the whole table. What the monitor cannot pin down (a table, chain or set added or
// deleted, events lost), a chain or set that is not ours, or too many objects at once: a full sync.
//
// It never trusts its memory of the kernel over the kernel. A dirty chain is read back (its rules
// and handles, one small dump). A changed element is compared as the kernel announced it: the
// kernel holds, under each key another process touched, what its last announcement says (the
// element added, or nothing), and under every other key what the proxy last wrote, since any
// change to it would have been announced too (a lost announcement makes a full sync). A write
// that does not fit what is there (a delete of a missing element) is refused by the kernel, and
// the refusal makes a full sync. Elements the monitor could not decode: their set is read back.

import { elementKey, knownChain, samePayload, type Chain, type Family, type NftConnection, type NftSet, type Rule, type SetElement } from '../../nft/index.js';
import type { Contributor } from './element-index.js';
import type { KernelView } from './kernel-view.js';
import type { Plan } from './plan.js';
import type { SyncPlanner } from './planner.js';
import type { ElementChange, RepairScope } from './table-watch.js';

/**
 * More objects than this and a full sync is cheaper (one dump instead of one request each): a
 * rule deleted from every service chain by a careless script is a full sync's work anyway.
 */
export const MAX_TARGETED_OBJECTS = 64;

/** The outside changes seen since the last sync, merged (FamilySync keeps one). */
export class DirtyObjects {
  readonly chains = new Set<string>();
  readonly elements = new Map<string, ElementChange[]>();
  readonly sets = new Set<string>();
  readonly deletedSets = new Set<string>();

  add(scope: RepairScope): void {
    scope.chains.forEach((c) => this.chains.add(c));
    scope.elements.forEach((changes, name) => {
      const list = this.elements.get(name);
      if (list) list.push(...changes);
      else this.elements.set(name, [...changes]);
    });
    scope.sets.forEach((s) => this.sets.add(s));
    scope.deletedSets.forEach((s) => this.deletedSets.add(s));
  }

  /** Objects touched (each set counted once). */
  get size(): number {
    let sets = this.sets.size;
    for (const name of this.elements.keys()) if (!this.sets.has(name)) sets++;
    return this.chains.size + sets + this.deletedSets.size;
  }
}

/** What the kernel holds under the keys others touched in one set: the element, or undefined (none). */
interface HeldElements {
  set: NftSet;
  held: Map<string, SetElement | undefined>;
}

/** What a targeted read found: the dirty chains with the model's rules for them (the kernel's are in the view), and the touched elements. */
export interface RepairRead {
  chains: { owner: Contributor; chain: Chain; rules: readonly Rule[] }[];
  elements: HeldElements[];
  /** Sets read back whole. */
  sets: number;
}

/** Replays one set's announced changes: the kernel's element under each touched key, or undefined. */
function heldAfter(set: NftSet, changes: readonly ElementChange[]): Map<string, SetElement | undefined> {
  const held = new Map<string, SetElement | undefined>();
  for (const { verb, elements } of changes) for (const e of elements) held.set(elementKey(set, e), verb === 'add' ? e : undefined);
  return held;
}

/**
 * Reads the dirty objects back into `view` (chains: their rules and handles) and the element index
 * (sets: what the kernel holds, compared in full at the next queue); undefined when only a full
 * sync can repair them (the caller then asks for one). Nothing is changed before every read has
 * succeeded.
 */
export async function readDirty(nft: NftConnection, family: Family, table: string, dirty: DirtyObjects, view: KernelView, planner: SyncPlanner): Promise<RepairRead | undefined> {
  if (dirty.size > MAX_TARGETED_OBJECTS) return undefined;
  // A set of ours deleted (its rules with it): a full sync. Any other deleted set was not ours
  // (an anonymous set goes with its rule, whose chain is dirty too).
  for (const name of dirty.deletedSets) if (view.sets.has(name)) return undefined;
  const chains: RepairRead['chains'] = [];
  for (const name of dirty.chains) {
    const desired = planner.desiredChain(name);
    if (!desired || !view.chains.has(name)) return undefined;
    chains.push(desired);
  }
  const declared = new Map(planner.index.declaredSets().map((s) => [s.name, s]));
  // An interval set's announcements come as range ends: it is read back whole.
  const readWhole = new Set([...dirty.sets, ...[...dirty.elements.keys()].filter((name) => declared.get(name)?.flags?.includes('interval'))]);
  const sets = [...readWhole].map((name) => declared.get(name));
  const elements: HeldElements[] = [];
  for (const [name, changes] of dirty.elements) {
    const set = declared.get(name);
    if (set && !readWhole.has(name)) elements.push({ set, held: heldAfter(set, changes) });
    else if (!set) sets.push(undefined);
  }
  // A set of one service port's own (kube-proxy's affinity sets) is filled by the data plane: not ours to compare.
  if (sets.some((s) => s === undefined)) return undefined;
  // A chain or set deleted meanwhile fails its read (ENOENT): the caller falls back to a full sync.
  const [ruleReads, elementReads] = await Promise.all([
    Promise.all(chains.map((c) => nft.dump({ family, table, chain: c.chain.name }))),
    Promise.all(sets.map((s) => nft.dumpSetElements(s!))),
  ]);
  chains.forEach((c, i) => {
    const known = view.chains.get(c.chain.name)!;
    view.chains.set(c.chain.name, knownChain(known.chain, ruleReads[i]!.rules));
  });
  // The index compares a set in full against what it was told the kernel holds (a cold start's
  // unkeyed elements are keyed first, or the resync would drop them from the desired side).
  planner.index.settle();
  sets.forEach((s, i) => planner.index.resync(s!.name, elementReads[i]!.elements as SetElement[]));
  return { chains, elements, sets: sets.length };
}

/** Rewrites the dirty chains where the kernel's rules (now in `view`) differ from the model's. */
export function planRepair(plan: Plan, view: KernelView, planner: SyncPlanner, read: RepairRead): void {
  // Their handles come back, as a partial sync's do (a later change may replace a rule by handle).
  plan.echoes ??= new Map();
  for (const { owner, chain, rules } of read.chains) planner.writeChain(plan, view, owner, chain, rules);
  // The touched elements set back to the model's: the element index's stores already hold the
  // model's as written, so it has nothing to queue for them (elements' owners are found per element).
  for (const { set, held } of read.elements) {
    const add: SetElement[] = [];
    const del: SetElement[] = [];
    held.forEach((have, key) => {
      const want = planner.index.desired(set.name, key);
      if (want === undefined) {
        if (have !== undefined) del.push(have);
      } else if (have === undefined) add.push(want);
      else if (!samePayload(have, want)) del.push(have), add.push(want);
    });
    if (del.length) plan.tx.delete({ set, elements: del });
    if (add.length) plan.tx.add({ set, elements: add });
    plan.stats.elementsChanged += add.length + del.length;
  }
}
