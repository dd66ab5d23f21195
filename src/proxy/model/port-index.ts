// The few service ports that what runs after every sync looks at: those with a Local traffic
// policy (the no-local-endpoint metrics, the health-check NodePorts) and the UDP and SCTP ones (the
// conntrack cleanup). The tracker keeps these sets in its states as it updates them in place, so
// that each sync's bookkeeping visits them instead of every port: at 10k service ports that
// bookkeeping took 0.4 ms a sync, a fifth of a one-endpoint sync's own time. A state made by hand
// (tests, `nftlink render` of a fixture) has none: then every port is visited.

import type { ProxyState, ServicePort, ServicePortId } from './types.js';

/** A state with the tracker's indexes, mutable (the tracker's own). */
export interface IndexedPorts {
  localPolicyPorts: Set<ServicePortId>;
  flowCleanedPorts: Set<ServicePortId>;
}

export const hasLocalPolicy = (sp: ServicePort): boolean => sp.internalTrafficPolicy === 'Local' || sp.externalTrafficPolicy === 'Local';
export const isFlowCleaned = (sp: ServicePort): boolean => sp.protocol === 'UDP' || sp.protocol === 'SCTP';

/** The port (added or replaced) in the indexes it belongs to, and out of the others. */
export function indexPort(ix: IndexedPorts, sp: ServicePort): void {
  if (hasLocalPolicy(sp)) ix.localPolicyPorts.add(sp.id);
  else ix.localPolicyPorts.delete(sp.id);
  if (isFlowCleaned(sp)) ix.flowCleanedPorts.add(sp.id);
  else ix.flowCleanedPorts.delete(sp.id);
}

export function unindexPort(ix: IndexedPorts, id: ServicePortId): void {
  ix.localPolicyPorts.delete(id);
  ix.flowCleanedPorts.delete(id);
}

function* portsOf(state: ProxyState, ids: ReadonlySet<ServicePortId> | undefined, keep: (sp: ServicePort) => boolean): Generator<ServicePort> {
  if (ids === undefined) {
    for (const sp of state.services.values()) if (keep(sp)) yield sp;
    return;
  }
  for (const id of ids) {
    const sp = state.services.get(id);
    if (sp !== undefined && keep(sp)) yield sp;
  }
}

/** The state's service ports with a Local traffic policy (internal or external). */
export function localPolicyPorts(state: ProxyState): Iterable<ServicePort> {
  return portsOf(state, state.localPolicyPorts, hasLocalPolicy);
}

/** The state's UDP and SCTP service ports. */
export function flowCleanedPorts(state: ProxyState): Iterable<ServicePort> {
  return portsOf(state, state.flowCleanedPorts, isFlowCleaned);
}
