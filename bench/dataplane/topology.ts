// One host per (shape, size): a fresh one-node cluster (src/netns/cluster.ts: a client namespace, a node
// namespace that routes and holds the shape's ruleset, pod namespaces behind it) with a tcp-probe
// server in every pod. Each gets its own node namespace, so only one shape is ever loaded in a
// node, and all can be measured in alternation while all are loaded.

import type { ChildProcess } from 'node:child_process';
import { createCluster, type Cluster } from '../../src/netns/cluster.js';
import { startServer, type ProbeBinary } from './probe.js';
import { POD_PORT } from './services.js';
import type { ShapeName } from './shapes.js';

export interface Host {
  shape: ShapeName;
  /** How many services its ruleset holds. */
  services: number;
  cluster: Cluster;
  podIPs: string[];
  remove(): void;
}

const PREFIX: Record<ShapeName, string> = { slots: 'nftlink-dp-sl', 'kube-proxy': 'nftlink-dp-kp', iptables: 'nftlink-dp-ipt', floor: 'nftlink-dp-fl' };

export async function createHost(shape: ShapeName, services: number, pods: number, bin: ProbeBinary): Promise<Host> {
  const cluster = createCluster(pods, PREFIX[shape]);
  const servers: ChildProcess[] = [];
  const remove = (): void => {
    for (const s of servers) s.kill('SIGKILL');
    cluster.remove();
  };
  try {
    for (const pod of cluster.pods) servers.push(await startServer(bin, pod.ns.name, POD_PORT));
  } catch (err) {
    remove();
    throw err;
  }
  return { shape, services, cluster, podIPs: cluster.pods.map((p) => p.ipv4), remove };
}
