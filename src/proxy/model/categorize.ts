// Which endpoints a ServicePort's traffic may go to: kube-proxy's CategorizeEndpoints
// (pkg/proxy/topology.go). Topology-aware routing (zone and node hints, which trafficDistribution
// and the topology-mode annotation make the EndpointSlice controller write) is decided when the
// endpoints are merged (endpoints.ts, applyTopology): Cluster policy takes the ready endpoints
// inside this node's topology, Local policy ignores it.

import type { ServiceEndpoint, ServicePort } from './types.js';

export interface CategorizedEndpoints {
  /** For Cluster traffic policy; empty when neither policy is Cluster. */
  clusterEndpoints: readonly ServiceEndpoint[];
  /** For Local traffic policy; empty when neither policy is Local. */
  localEndpoints: readonly ServiceEndpoint[];
  /** The union of the two, in the input order: what a masquerade/affinity chain may reach. */
  allReachableEndpoints: readonly ServiceEndpoint[];
  /** Some endpoint anywhere can take traffic (else kube-proxy rejects instead of dropping). */
  hasAnyEndpoints: boolean;
}

/**
 * ServicePort.UsesClusterEndpoints(): some traffic of this port is routed cluster-wide. Any
 * externally reachable port does, whatever its external policy: with Local, pods and the node
 * itself still reach every endpoint (the external chain's short-circuit rules), also when the
 * internal policy is Local too.
 */
export function usesClusterEndpoints(sp: ServicePort): boolean {
  return sp.internalTrafficPolicy === 'Cluster' || sp.external;
}

/** ServicePort.UsesLocalEndpoints(): some traffic of this port may only go to this node's endpoints. */
export function usesLocalEndpoints(sp: ServicePort): boolean {
  return sp.internalTrafficPolicy === 'Local' || (sp.external && sp.externalTrafficPolicy === 'Local');
}

const isReady = (ep: ServiceEndpoint): boolean => ep.ready;
/** Terminating but still serving: used only when nothing ready is left, to drain gracefully (KEP-1669). */
const isServingTerminating = (ep: ServiceEndpoint): boolean => ep.serving && ep.terminating;

export function categorizeEndpoints(endpoints: readonly ServiceEndpoint[], sp: ServicePort): CategorizedEndpoints {
  let clusterEndpoints: readonly ServiceEndpoint[] = [];
  let localEndpoints: readonly ServiceEndpoint[] = [];
  let hasAnyEndpoints = false;

  const useCluster = usesClusterEndpoints(sp);
  if (useCluster) {
    // Hints never leave this node without a ready endpoint (applyTopology falls back to all when
    // none is hinted here); the serving-terminating fallback ignores them, as kube-proxy's does.
    const ready = endpoints.filter((ep) => ep.ready && !ep.outsideTopology);
    clusterEndpoints = ready.length > 0 ? ready : endpoints.filter(isServingTerminating);
    hasAnyEndpoints = clusterEndpoints.length > 0;
  }
  if (!usesLocalEndpoints(sp)) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: clusterEndpoints, hasAnyEndpoints };
  }

  hasAnyEndpoints ||= endpoints.some((ep) => isReady(ep) || isServingTerminating(ep));
  localEndpoints = readyElseServingTerminating(endpoints.filter((ep) => ep.isLocal));
  if (!useCluster) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: localEndpoints, hasAnyEndpoints };
  }

  // Cluster endpoints may include remote ones that are not local, and local endpoints may include
  // terminating ones that are not in the cluster set: the reachable set is the union.
  const reachable = new Set([...clusterEndpoints, ...localEndpoints]);
  const allReachableEndpoints = endpoints.filter((ep) => reachable.has(ep));
  return { clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints };
}

function readyElseServingTerminating(endpoints: readonly ServiceEndpoint[]): readonly ServiceEndpoint[] {
  const ready = endpoints.filter(isReady);
  return ready.length > 0 ? ready : endpoints.filter(isServingTerminating);
}
