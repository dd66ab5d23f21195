// A targeted repair: the objects an outside change touched (the monitor names them: a rule's
// chain, an element's set; table-watch.ts) are read back from the kernel alone, and the sync then
// rewrites what differs from the model in them, and nothing else. One element deleted from a
// 10k-service table costs a read of that one set and a write of that one element, not a dump of
// the whole table. What the monitor cannot pin down (a table, chain or set added or deleted,
// events lost), a chain or set that is not ours, or too many objects at once: a full sync.
//
// The read is what makes this safe: a targeted repair never trusts its memory of the kernel over
// the kernel. Every object it writes is compared with what the kernel holds right now.

import { knownChain, type Chain, type Family, type NftConnection, type Rule, type SetElement } from '../../nft/index.js';
import type { Contributor } from './element-index.js';
import type { KernelView } from './kernel-view.js';
import type { Plan } from './plan.js';
import type { SyncPlanner } from './planner.js';
import type { RepairScope } from './table-watch.js';

/**
 * More objects than this and a full sync is cheaper (one dump instead of one request each): a
 * rule deleted from every service chain by a careless script is a full sync's work anyway.
 */
export const MAX_TARGETED_OBJECTS = 64;

/** The outside changes seen since the last sync, merged (FamilySync keeps one). */
export class DirtyObjects {
  readonly chains = new Set<string>();
  readonly sets = new Set<string>();
  readonly deletedSets = new Set<string>();

  add(scope: RepairScope): void {
    scope.chains.forEach((c) => this.chains.add(c));
    scope.sets.forEach((s) => this.sets.add(s));
    scope.deletedSets.forEach((s) => this.deletedSets.add(s));
  }

  get size(): number {
    return this.chains.size + this.sets.size + this.deletedSets.size;
  }
}

/** What a targeted read found: the dirty chains with the model's rules for them (the kernel's are in the view). */
export interface RepairRead {
  chains: { owner: Contributor; chain: Chain; rules: readonly Rule[] }[];
  sets: number;
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
  const declared = planner.index.declaredSets();
  const sets = [...dirty.sets].map((name) => declared.find((s) => s.name === name));
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
  return { chains, sets: sets.length };
}

/** Rewrites the dirty chains where the kernel's rules (now in `view`) differ from the model's. */
export function planRepair(plan: Plan, view: KernelView, planner: SyncPlanner, read: RepairRead): void {
  // Their handles come back, as a partial sync's do (a later change may replace a rule by handle).
  plan.echoes ??= new Map();
  for (const { owner, chain, rules } of read.chains) planner.writeChain(plan, view, owner, chain, rules);
}
