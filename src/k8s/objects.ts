// The parts of Kubernetes objects the proxy reads: core/v1 Service and Node, discovery.k8s.io/v1
// EndpointSlice. Structural types, compatible with @kubernetes/client-node's V1Service etc., so
// objects from the API server and from manifest files go through the same code. Every object the
// sources deliver has been checked against these types (validation/schemas.json says the same in
// JSON Schema, validation/validate.ts checks it): the readers may rely on them.

/** How an object changed, as a watch reports it and as the proxy's sources deliver it. */
export type EventType = 'add' | 'update' | 'delete';

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** RFC 3339; orders Services that claim the same address (proxy/model/claims.ts). */
  creationTimestamp?: string;
  deletionTimestamp?: string | Date;
}

export interface ServicePortSpec {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface Service {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    ports?: ServicePortSpec[];
    externalIPs?: string[];
    loadBalancerIP?: string;
    loadBalancerSourceRanges?: string[];
    externalTrafficPolicy?: string;
    internalTrafficPolicy?: string;
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    healthCheckNodePort?: number;
    externalName?: string;
    selector?: Record<string, string>;
  };
  status?: {
    loadBalancer?: { ingress?: { ip?: string; hostname?: string; ipMode?: string }[] };
  };
}

export interface EndpointPort {
  name?: string;
  protocol?: string;
  port?: number;
  appProtocol?: string;
}

export interface Endpoint {
  /** Required by the API (it may still be empty here: the model refuses that). */
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  /** Set by the EndpointSlice controller for topology-aware routing and trafficDistribution. */
  hints?: { forZones?: { name?: string }[]; forNodes?: { name?: string }[] };
  targetRef?: { kind?: string; name?: string; namespace?: string };
}

export interface EndpointSlice {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  addressType?: string;
  /** null from the API server when the slice is empty (the Go field has no omitempty). */
  endpoints?: Endpoint[] | null;
  ports?: EndpointPort[] | null;
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: { key?: string; effect?: string; value?: string }[] };
  status?: { addresses?: { type?: string; address?: string }[] };
}

/** Labels and annotations the proxy reads, as kube-proxy names them. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
export const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
