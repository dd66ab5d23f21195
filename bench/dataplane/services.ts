// The services of the data-plane benchmark, as the proxy's model (a ProxyState built directly: no
// manifests, no proxy process): N ClusterIP TCP services, each with the same E endpoints (the
// cluster's pods, one port), and the one LayoutConfig every nftables shape is programmed with. The
// iptables shape is written from the same ProxyState, so the three shapes carry the same services.

import { CLUSTER } from '../../src/netns/cluster.js';
import type { LayoutConfig } from '../../src/proxy/layout/types.js';
import type { ProxyState, ServiceEndpoint, ServicePort } from '../../src/proxy/model/types.js';
import { BENCH_NODE, benchLayoutConfig as layoutConfigOf, clusterIPServicePort } from '../../test/fixtures/proxy-model.js';

/** ClusterIPs: 198.19.64.1 upwards (198.19.64.0/18), clear of the cluster's node, client and pod links. */
export const SERVICE_CIDR = '198.19.64.0/18';
export const MAX_SERVICES = 16_382;
export const SERVICE_PORT = 80;
export const POD_PORT = 8080;

export function clusterIP(i: number): string {
  if (!Number.isInteger(i) || i < 0 || i >= MAX_SERVICES) throw new RangeError(`service index ${i} is outside ${SERVICE_CIDR}`);
  const n = i + 1;
  return `198.19.${64 + (n >> 8)}.${n & 255}`;
}

export function serviceName(i: number): string {
  return `svc-${String(i).padStart(5, '0')}`;
}

function servicePort(i: number): ServicePort {
  return clusterIPServicePort(serviceName(i), clusterIP(i));
}

/** `services` ClusterIP services on port 80/TCP, every one backed by every pod address on 8080. */
export function benchState(services: number, podIPs: readonly string[]): ProxyState {
  const endpoints: ServiceEndpoint[] = [...podIPs]
    .sort()
    .map((ip) => ({ ip, port: POD_PORT, ready: true, serving: true, terminating: false, isLocal: true, nodeName: BENCH_NODE }));
  const byId = new Map<string, ServicePort>();
  const eps = new Map<string, readonly ServiceEndpoint[]>();
  for (let i = 0; i < services; i++) {
    const sp = servicePort(i);
    byId.set(sp.id, sp);
    eps.set(sp.id, endpoints);
  }
  return { family: 'ipv4', services: byId, endpoints: eps };
}

/**
 * The proxy's IPv4 configuration for the benchmark's node: the pods' CIDR as the cluster CIDR (the
 * client is outside it, so its connections are masqueraded, in every shape), the default mark.
 */
export function benchLayoutConfig(): LayoutConfig {
  return layoutConfigOf({ nodeIP: CLUSTER.nodeIPv4, podCIDR: CLUSTER.podCIDRv4, serviceCIDR: SERVICE_CIDR });
}
