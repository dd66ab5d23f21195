// Which conntrack flows a sync made stale: kube-proxy's pkg/proxy/conntrack cleanup, for UDP and SCTP
// service ports (TCP flows end by themselves: a reset or a timeout, never a silent black hole).
//
//  1. An endpoint that could take a service port's traffic before the sync and cannot now: a flow
//     whose original destination is one of the port's service addresses (ClusterIP, external IP,
//     load-balancer IP) with the service port, or any address with its NodePort, and whose reply
//     source is that endpoint, keeps being DNAT'ed to it as long as the client keeps sending: delete it.
//  2. A service port that had no endpoint and now has one: flows to its addresses were created while
//     its packets were dropped or rejected (or before the service existed) and would keep missing the
//     new endpoints: delete every flow to its addresses and NodePort.
//
// Without a baseline (the first sync after start) there is no "before": only flows to service ports
// with endpoints that were never DNAT'ed are deleted (they were made before the rules existed); the
// tables survive a restart, so flows DNAT'ed by them are still right. The same after a repair of
// what another process did to the tables (repairedFlowFilters), for TCP too.

import type { NativeConntrackFilter } from '../../native/index.js';
import { categorizeEndpoints } from '../model/categorize.js';
import { flowCleanedPorts, isFlowCleaned } from '../model/port-index.js';
import type { ProxyState, ServiceEndpoint, ServicePort, ServicePortId } from '../model/types.js';

const PROTOCOL_NUMBER = { TCP: 6, UDP: 17, SCTP: 132 } as const;

/** The IP protocol number when flows of this protocol need cleaning, else undefined. */
function cleanedProtocol(sp: ServicePort): number | undefined {
  return isFlowCleaned(sp) ? PROTOCOL_NUMBER[sp.protocol] : undefined;
}

/** The endpoints a service port's rules may send traffic to. */
function reachable(state: ProxyState, sp: ServicePort): readonly ServiceEndpoint[] {
  return reachableOf(sp, state.endpoints.get(sp.id) ?? []);
}

function reachableOf(sp: ServicePort, endpoints: readonly ServiceEndpoint[]): readonly ServiceEndpoint[] {
  return categorizeEndpoints(endpoints, sp).allReachableEndpoints;
}

/**
 * What the next sync's cleanup compares with: the UDP and SCTP service ports a sync programmed,
 * each with its endpoint list. The model's state is updated in place by the next snapshot
 * (tracker.ts), so the cleanup keeps references of its own; the tracker replaces service ports
 * and endpoint lists, it never changes one.
 */
export type FlowBaseline = ReadonlyMap<ServicePortId, { sp: ServicePort; endpoints: readonly ServiceEndpoint[] }>;

export function flowBaseline(state: ProxyState): FlowBaseline {
  const out = new Map<ServicePortId, { sp: ServicePort; endpoints: readonly ServiceEndpoint[] }>();
  for (const sp of flowCleanedPorts(state)) out.set(sp.id, { sp, endpoints: state.endpoints.get(sp.id) ?? [] });
  return out;
}

/** The (address, port) pairs a client may have sent to, for a service port. */
function destinations(sp: ServicePort): { dst?: string; dstPort: number }[] {
  const out: { dst?: string; dstPort: number }[] = [];
  const ips = new Set([sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs].filter((ip) => ip !== ''));
  for (const ip of ips) out.push({ dst: ip, dstPort: sp.port });
  // Any local address answers the NodePort; the reply source (the endpoint) keeps the match narrow.
  if (sp.nodePort > 0) out.push({ dstPort: sp.nodePort });
  return out;
}

export interface StaleFlows {
  filters: NativeConntrackFilter[];
  /** Service ports whose endpoints went away (case 1), for the log. */
  staleEndpoints: number;
  /** Service ports that went from no endpoints to some (case 2), for the log. */
  newlyActive: number;
}

/**
 * The filters that select the flows this sync made stale, for one family. `previous` is the
 * baseline of the last successful sync (flowBaseline; undefined before the first); `current` the
 * state just programmed.
 */
export function staleFlowFilters(previous: FlowBaseline | undefined, current: ProxyState): StaleFlows {
  const filters: NativeConntrackFilter[] = [];
  const seen = new Set<string>();
  const add = (f: NativeConntrackFilter): void => {
    const k = `${f.protocol}|${f.dst ?? '*'}|${f.dstPort}|${f.replySrc ?? '*'}|${f.notNatted ? 1 : 0}`;
    if (seen.has(k)) return;
    seen.add(k);
    filters.push(f);
  };
  let staleEndpoints = 0;
  let newlyActive = 0;

  if (previous === undefined) {
    notNattedFilters(current, cleanedProtocol, add);
    return { filters, staleEndpoints, newlyActive };
  }

  // Case 1: every service port of the previous state (removed ones too) that lost a reachable endpoint.
  for (const { sp: before, endpoints } of previous.values()) {
    const protocol = cleanedProtocol(before)!;
    const was = reachableOf(before, endpoints);
    if (was.length === 0) continue;
    const after = current.services.get(before.id);
    const now = new Set(after ? reachable(current, after).map((ep) => `${ep.ip}|${ep.port}`) : []);
    const gone = was.filter((ep) => !now.has(`${ep.ip}|${ep.port}`));
    if (gone.length === 0) continue;
    staleEndpoints++;
    // Flows were made against the old addresses; a changed service port may also have new ones.
    const dests = destinations(before);
    if (after && after.protocol === before.protocol) dests.push(...destinations(after));
    for (const ep of gone) for (const d of dests) add({ protocol, ...d, replySrc: ep.ip });
  }

  // Case 2: service ports (new or not) that had no reachable endpoint and now have one.
  for (const sp of flowCleanedPorts(current)) {
    const protocol = cleanedProtocol(sp);
    if (protocol === undefined || reachable(current, sp).length === 0) continue;
    const before = previous.get(sp.id);
    if (before && cleanedProtocol(before.sp) === protocol && reachableOf(before.sp, before.endpoints).length > 0) continue;
    newlyActive++;
    for (const d of destinations(sp)) add({ protocol, ...d });
  }
  return { filters, staleEndpoints, newlyActive };
}

/** Adds a filter for the never-DNAT'ed flows to each service address of a port with reachable endpoints. */
function notNattedFilters(state: ProxyState, protocolOf: (sp: ServicePort) => number | undefined, add: (f: NativeConntrackFilter) => void): void {
  for (const sp of state.services.values()) {
    const protocol = protocolOf(sp);
    if (protocol === undefined || reachable(state, sp).length === 0) continue;
    for (const d of destinations(sp)) if (d.dst !== undefined) add({ protocol, ...d, notNatted: true });
  }
}

/**
 * After a repair of what another process did to the tables (a flushed ruleset, a deleted rule or
 * element): flows made meanwhile to the service addresses of ports with endpoints were never
 * DNAT'ed, and keep missing the endpoints once the rules are back (a UDP flow for as long as the
 * client sends; a TCP SYN's entry for 120 s, taking a later connection from the same client port
 * with it). None of them can work un-DNAT'ed (a service address has no host), so every protocol's
 * go. NodePorts are left alone: the node's own addresses have hosts behind them.
 */
export function repairedFlowFilters(state: ProxyState): NativeConntrackFilter[] {
  const filters: NativeConntrackFilter[] = [];
  notNattedFilters(state, (sp) => PROTOCOL_NUMBER[sp.protocol], (f) => filters.push(f));
  return filters;
}
