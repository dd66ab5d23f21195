// What the benchmarks (and the tests that reuse their models) feed the proxy's engine directly, with
// no manifests and no proxy process: ClusterIP service ports converted by the proxy's own model code
// (so every field has its defaults), and the IPv4 LayoutConfig of a benchmark node.

import type { Service } from '../k8s/objects.js';
import { layoutConfigs } from '../config/layout-configs.js';
import type { LayoutConfig } from '../proxy/layout/types.js';
import { servicePorts } from '../proxy/model/service.js';
import type { ServicePort } from '../proxy/model/types.js';

export const BENCH_TABLE = 'kube-proxy';
export const BENCH_NODE = 'node';

/** One ClusterIP service port, 80/TCP to 8080, in namespace `bench` unless `spec`/`namespace` say otherwise. */
export function clusterIPServicePort(name: string, clusterIP: string, spec: Partial<NonNullable<Service['spec']>> = {}, namespace = 'bench'): ServicePort {
  const svc: Service = {
    metadata: { namespace, name },
    spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }], ...spec },
  };
  const r = servicePorts(svc, 'ipv4');
  if (!('ports' in r) || r.ports.length !== 1) throw new Error(`bench: the model refused service ${namespace}/${name}: ${JSON.stringify(r)}`);
  return r.ports[0]!;
}

/** The proxy's IPv4 configuration on a benchmark node (no NodePort addresses, no localhost proxy). */
export function benchLayoutConfig(net: { nodeIP: string; podCIDR: string; serviceCIDR: string }): LayoutConfig {
  const [cfg] = layoutConfigs(
    {
      table: BENCH_TABLE,
      nodeName: BENCH_NODE,
      nodeIPs: [net.nodeIP],
      clusterCIDRs: [net.podCIDR],
      serviceCIDRs: [net.serviceCIDR],
      nodePortAddresses: [],
      masqueradeAll: false,
      masqueradeBit: 14,
      minSyncPeriodMs: 1000,
      syncPeriodMs: 30_000,
      localhostNodePorts: false,
    },
    ['ipv4'],
  );
  return cfg!;
}
