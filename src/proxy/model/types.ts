// The proxy's model: what it programs, normalized from Services and EndpointSlices. A ProxyState
// holds one IP family (the ip and ip6 tables are programmed from one each, as kube-proxy runs one
// proxier per family): one ServicePort per (service, port) that has a ClusterIP of that family, and
// its endpoints merged from every EndpointSlice of the service of that family. The layouts are pure
// functions of a ProxyState.

export type IPFamily = 'ipv4' | 'ipv6';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type TrafficPolicy = 'Cluster' | 'Local';

/** "namespace/name:portName" (portName may be empty: "ns/svc:"), kube-proxy's ServicePortName. */
export type ServicePortId = string;

export interface ServicePort {
  /** ServicePortName.String(): "ns/name:port" — the key in every map, and the element comment base. */
  id: ServicePortId;
  namespace: string;
  name: string;
  /** The Service port's name ('' when unnamed). */
  portName: string;
  protocol: Protocol;
  family: IPFamily;
  /** The ClusterIP of this family. */
  clusterIP: string;
  port: number;
  /** 0 when none. */
  nodePort: number;
  externalIPs: readonly string[];
  /** status.loadBalancer.ingress[].ip of this family (VIP mode only; ipMode Proxy excluded). */
  loadBalancerIPs: readonly string[];
  /** CIDRs of this family; empty = no firewall. */
  loadBalancerSourceRanges: readonly string[];
  externalTrafficPolicy: TrafficPolicy;
  internalTrafficPolicy: TrafficPolicy;
  /** ClientIP affinity timeout in seconds; 0 = no affinity. */
  affinityTimeoutSeconds: number;
  /** 0 when none. */
  healthCheckNodePort: number;
  /** Whether the service is of a type that gets external traffic (NodePort, LoadBalancer, externalIPs). */
  external: boolean;
}

export interface ServiceEndpoint {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  /** The endpoint runs on this node. */
  isLocal: boolean;
  nodeName?: string;
  zone?: string;
  /**
   * Topology hints send this node's Cluster-policy traffic to other endpoints (endpoints.ts,
   * applyTopology); Local policy ignores it. Absent for a service without hints.
   */
  outsideTopology?: true;
}

/**
 * What the layouts consume: every service port of one IP family and its endpoints. The tracker's
 * own, updated in place by its next snapshot (tracker.ts): read it during the sync it came with.
 */
export interface ProxyState {
  family: IPFamily;
  services: ReadonlyMap<ServicePortId, ServicePort>;
  /**
   * Endpoints per ServicePort id, de-duplicated, in kube-proxy's order (endpoints.ts, compareEndpoints).
   * Every ServicePort in `services` has an entry (an empty list when it has no endpoints).
   */
  endpoints: ReadonlyMap<ServicePortId, readonly ServiceEndpoint[]>;
  /**
   * Kept by the tracker (absent from states made by hand): the ids of the service ports with a
   * Local traffic policy, and of the UDP and SCTP ones (port-index.ts).
   */
  localPolicyPorts?: ReadonlySet<ServicePortId>;
  flowCleanedPorts?: ReadonlySet<ServicePortId>;
}

/** What changed between two states (ids of service ports whose service or endpoints changed). */
export interface StateChange {
  /** Service ports added, or whose ServicePort differs. */
  changedServices: ReadonlySet<ServicePortId>;
  /** Service ports whose endpoint list differs, a missing list counting as empty (so a removed port that had endpoints is here too). */
  changedEndpoints: ReadonlySet<ServicePortId>;
  /** Service ports that exist in the previous state and not in the current one. */
  removed: ReadonlySet<ServicePortId>;
}

/** A rejected object: logged once with its name and reason, counted, and otherwise ignored. */
export interface InvalidObject {
  kind: 'Service' | 'EndpointSlice' | 'Node' | 'Manifest';
  /** "namespace/name", or a file origin. */
  ref: string;
  reason: string;
}
