// What a sync does when the kernel refuses its transaction: retry as a full sync, leave out the one
// service port the refused operation belongs to, or give up. Nothing of a refused transaction was
// applied (earlier parts of a cold start were, which the next full sync's dump sees).

import { NftCommitError, type SetElement } from '../../nft/index.js';
import type { ServiceObjects } from '../layout/types.js';
import type { ServicePortId, StateChange } from '../model/types.js';
import type { ElementIndex } from './element-index.js';
import type { Plan } from './plan.js';

/** Attempts after the first before a sync gives up. */
export const MAX_RETRIES = 3;

/** Service ports left out because the kernel refused (or the layout could not build) their objects. */
export class Exclusions {
  private readonly reasons = new Map<ServicePortId, string>();

  has(id: ServicePortId): boolean {
    return this.reasons.has(id);
  }

  get size(): number {
    return this.reasons.size;
  }

  exclude(id: ServicePortId, reason: string): void {
    this.reasons.set(id, reason);
  }

  /** A service port left out gets another chance once its objects change. */
  changed(change: StateChange | undefined): void {
    if (!change) return;
    for (const ids of [change.changedServices, change.changedEndpoints, change.removed]) for (const id of ids) this.reasons.delete(id);
  }
}

export type Recovery =
  /** Plan again from a fresh dump: the sync's belief of the kernel may be wrong. */
  | { kind: 'full-sync' }
  /** Leave out this service port, program everyone else now. */
  | { kind: 'exclude'; servicePort: ServicePortId }
  | { kind: 'fail' };

/**
 * A partial sync builds on what the sync believes the kernel holds, and a refusal may mean the
 * belief is wrong (the table deleted under us: ENOENT for a service that did nothing wrong). As
 * kube-proxy does after any failed sync, the next attempt is a full sync from a fresh dump; only a
 * refusal there can leave a service port out.
 */
export function recovery(err: unknown, plan: Plan, partial: boolean, attempt: number, index: ElementIndex, committed: ReadonlyMap<ServicePortId, ServiceObjects>): Recovery {
  if (attempt >= MAX_RETRIES) return { kind: 'fail' };
  if (partial) return { kind: 'full-sync' };
  const owner = refusedServicePort(err, plan, index, committed);
  return owner === undefined ? { kind: 'fail' } : { kind: 'exclude', servicePort: owner };
}

/** The service port a refused operation belongs to, if it belongs to exactly one. */
function refusedServicePort(err: unknown, plan: Plan, index: ElementIndex, committed: ReadonlyMap<ServicePortId, ServiceObjects>): ServicePortId | undefined {
  if (!(err instanceof NftCommitError) || err.operationIndex < 0) return undefined;
  // The error's index is within the transaction that failed; the committed operations precede it.
  let owner = plan.ownerAt(plan.committedOps + err.operationIndex);
  const op = err.operation;
  if (owner === undefined && op?.kind === 'element' && err.elementIndex !== undefined && err.elementIndex >= 0) {
    const el = op.elements[err.elementIndex];
    if (el && !index.isShared(op.set.name, el)) owner = contributorOf(op.set.name, el, plan.fragments, committed);
  }
  return owner ? owner : undefined;
}

/** The service port whose objects (this plan's, or the committed ones) hold this very element. */
function contributorOf(setName: string, el: SetElement, ...sources: ReadonlyMap<ServicePortId, ServiceObjects | undefined>[]): ServicePortId | undefined {
  for (const source of sources) for (const [id, f] of source) if (f?.elements.get(setName)?.includes(el)) return id;
  return undefined;
}
