// How big a state is, in the two counts that decide how a full sync reads the kernel back
// (KernelView.read: rules chain by chain from PER_CHAIN_RULES_FROM service ports, large sets left
// out from LARGE_SET_ELEMENTS endpoints). The tracker can tell them before it builds the state
// (ChangeTracker.sizes), so that a restart's read of the kernel starts while the state is built.

import type { ProxyState } from './types.js';

export interface StateSize {
  servicePorts: number;
  /** Endpoints over every service port: an endpoint of two ports counts twice. */
  endpoints: number;
}

export function stateSize(state: ProxyState): StateSize {
  let endpoints = 0;
  for (const eps of state.endpoints.values()) endpoints += eps.length;
  return { servicePorts: state.services.size, endpoints };
}
