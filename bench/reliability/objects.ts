// The cluster the reliability scenarios run: N Services with one EndpointSlice each. A few are
// stable and probed (ClusterIP and NodePort, all pods behind them), a few are churned and probed
// (their endpoints move among the real pods), and the rest are churned unprobed: their endpoints
// are addresses in the pod CIDR that no pod has. Every tenth bulk service has ClientIP affinity, so
// that churn also removes pinned endpoints (the pin sweep). Addresses: 198.18.0.0/15 only.

import type { EndpointSlice, Service } from '../../src/k8s/objects.js';

/** Service ClusterIPs: 198.19.64.1 onwards (16k addresses), clear of the cluster's links. */
export const SERVICE_CIDR = '198.19.64.0/18';
export const SERVICE_PORT = 80;
export const POD_PORT = 8080;
const FIRST_NODE_PORT = 30100;

export interface Target {
  name: string;
  kind: 'ClusterIP' | 'NodePort' | 'churned';
  /** host:port the client connects to. */
  address: string;
}

export interface ClusterObjects {
  services: Service[];
  slices: EndpointSlice[];
  /** Probed services that never change. */
  stable: Target[];
  /** Probed services whose endpoints change (always at least one ready). */
  churnedProbed: Target[];
  /** The slices churn may change: `probed` of the churned probed services, `bulk` of the rest. */
  churn: { probed: EndpointSlice[]; bulk: EndpointSlice[]; pools: Record<string, string[]> };
}

export function serviceIP(i: number): string {
  const n = i + 1;
  return `198.19.${64 + (n >> 8)}.${n & 255}`;
}

/**
 * The addresses an affinity service's endpoints take, its own: in the slots layout an endpoint
 * that two affinity service ports share is pinned by the one that claimed it first and the other
 * keeps kube-proxy's per-endpoint chains (src/proxy/layout/slots/affinity.ts), a choice that
 * depends on history. Disjoint pools keep the churned ruleset comparable with a cold start.
 * 16 addresses from 198.19.128.0 for the k-th affinity service (k < 2048).
 */
export function affinityPool(k: number): string[] {
  return Array.from({ length: 16 }, (_, j) => {
    const n = k * 16 + j;
    return `198.19.${128 + (n >> 8)}.${n & 255}`;
  });
}

/** 198.18.220.0 onwards: in the pod CIDR, never a pod's (pods are 198.18.10-209.2). */
function fakeEndpoint(i: number): string {
  const n = i % (36 * 256);
  return `198.18.${220 + (n >> 8)}.${n & 255}`;
}

function service(name: string, ip: string, opts: { nodePort?: number; affinity?: boolean } = {}): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: {
      type: opts.nodePort ? 'NodePort' : 'ClusterIP',
      clusterIP: ip,
      clusterIPs: [ip],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ name: 'http', protocol: 'TCP', port: SERVICE_PORT, targetPort: POD_PORT, ...(opts.nodePort ? { nodePort: opts.nodePort } : {}) }],
      ...(opts.affinity ? { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } } : {}),
    },
  };
}

function slice(service: string, addresses: readonly string[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: POD_PORT }],
    // On another node: every endpoint serves the ClusterIP and the NodePort alike.
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'other' })),
  };
}

/**
 * `count` services in all (at least 8): 2 stable ClusterIP, 2 stable NodePort and 2 churned probed
 * services behind `pods`, the rest bulk with `endpointsEach` fake endpoints.
 */
export function clusterObjects(count: number, pods: readonly string[], nodeIP: string, endpointsEach = 2): ClusterObjects {
  if (count < 8 || count > 16_000) throw new Error(`reliability: 8 to 16,000 services (got ${count})`);
  if (endpointsEach > 8) throw new Error(`reliability: at most 8 endpoints a service (got ${endpointsEach})`);
  const services: Service[] = [];
  const slices: EndpointSlice[] = [];
  const stable: Target[] = [];
  const churnedProbed: Target[] = [];
  const churn: ClusterObjects['churn'] = { probed: [], bulk: [], pools: {} };
  const add = (svc: Service, addresses: readonly string[]): EndpointSlice => {
    services.push(svc);
    const s = slice(svc.metadata!.name!, addresses);
    slices.push(s);
    return s;
  };
  for (let i = 0; i < 2; i++) {
    add(service(`stable-c${i}`, serviceIP(i)), pods);
    stable.push({ name: `stable-c${i}`, kind: 'ClusterIP', address: `${serviceIP(i)}:${SERVICE_PORT}` });
  }
  for (let i = 0; i < 2; i++) {
    add(service(`stable-n${i}`, serviceIP(2 + i), { nodePort: FIRST_NODE_PORT + i }), pods);
    stable.push({ name: `stable-n${i}`, kind: 'NodePort', address: `${nodeIP}:${FIRST_NODE_PORT + i}` });
  }
  for (let i = 0; i < 2; i++) {
    churn.probed.push(add(service(`churn-p${i}`, serviceIP(4 + i)), pods));
    churnedProbed.push({ name: `churn-p${i}`, kind: 'churned', address: `${serviceIP(4 + i)}:${SERVICE_PORT}` });
  }
  for (let i = 6; i < count; i++) {
    const affinity = i % 10 === 0;
    const pool = affinity ? affinityPool(i / 10) : undefined;
    const addresses = Array.from({ length: endpointsEach }, (_, k) => pool?.[k] ?? fakeEndpoint(i * endpointsEach + k));
    const s = add(service(`svc-${i}`, serviceIP(i), { affinity }), addresses);
    churn.bulk.push(s);
    if (pool) churn.pools[s.metadata!.name!] = pool;
  }
  return { services, slices, stable, churnedProbed, churn };
}
