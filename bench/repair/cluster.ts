// The measured setup: a node with two pods behind a NodePort service, the client outside, and
// `nftlink proxy` (the real CLI, as a user runs it) reading the service from a manifest directory.
// Addresses from src/netns/cluster.ts (198.18.0.0/15 only).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER, createCluster, probe, servePod, type Cluster } from '../../src/netns/cluster.js';
import { ProxyProcess } from '../../src/netns/proxy-process.js';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { serviceObjects } from '../process/manifests.js';

export const CLUSTER_IP = '198.18.200.60';
export const SERVICE_PORT = 80;
export const NODE_PORT = 30091;
const POD_PORT = 8080;
/** In the service CIDR but no service's: the proxy does not own this key of service-ips. */
export const ROGUE_ELEMENT = '198.18.200.99 . tcp . 80 : drop';

export interface RepairSetup {
  cluster: Cluster;
  proxy: ProxyProcess;
  /** Stops the proxy, removes the namespaces and the manifest directory; safe to call twice. */
  teardown(): Promise<void>;
}

/**
 * The services beside the measured one (bench:process's, from its service 3072 on: their ClusterIPs
 * 198.18.12.1 on and endpoints 198.19.60.1 on stay clear of the pods' 198.18.10-11.0/24, the
 * service CIDR 198.18.200.0/24 and the node's and client's 198.19.0.1-2). No traffic goes to them.
 */
const FIRST_EXTRA = 3072;

function extraManifests(services: number, endpoints: number): object {
  if ((FIRST_EXTRA + services) * endpoints > 65_533) throw new RangeError(`bench: ${services} x ${endpoints} extra endpoints do not fit one port's 198.19.0.0/16`);
  const items: object[] = [];
  for (let i = FIRST_EXTRA; i < FIRST_EXTRA + services; i++) items.push(...serviceObjects(i, endpoints));
  return { apiVersion: 'v1', kind: 'List', items };
}

function manifests(pods: Cluster['pods']): object {
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: { type: 'NodePort', clusterIP: CLUSTER_IP, clusterIPs: [CLUSTER_IP], ports: [{ name: 'http', protocol: 'TCP', port: SERVICE_PORT, targetPort: POD_PORT, nodePort: NODE_PORT }] },
  };
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: POD_PORT }],
    // On another node: no endpoint is local, both the ClusterIP and the NodePort reach both pods.
    endpoints: pods.map((p) => ({ addresses: [p.ipv4], conditions: { ready: true }, nodeName: 'other' })),
  };
  return { apiVersion: 'v1', kind: 'List', items: [svc, slice] };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// The proxy is not a child of the namespace (ProxyProcess spawns it itself), so removing the
// namespaces on SIGINT/SIGTERM would leave it running: it is killed first. Registered before any
// namespace exists, so this runs before src/netns/netns.ts's handler removes them and exits.
const liveProxies = new Set<ProxyProcess>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => liveProxies.forEach((p) => p.child.kill('SIGKILL')));

/** `extra`: that many more services of `endpoints` endpoints each in the table (bench:repair --size). */
/** Waits (up to `ms`) until the ClusterIP and the NodePort both answer; whether they do. */
export async function untilServed(cluster: Cluster, ms: number): Promise<boolean> {
  const answers = (): boolean =>
    probe(cluster.client, CLUSTER_IP, SERVICE_PORT, { timeoutMs: 300 }).answers[0]!.startsWith('pod') &&
    probe(cluster.client, CLUSTER.nodeIPv4, NODE_PORT, { timeoutMs: 300 }).answers[0]!.startsWith('pod');
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) if (answers()) return true;
  return answers();
}

export async function startSetup(layout: LayoutName, extra?: { services: number; endpoints: number }): Promise<RepairSetup> {
  const cluster = createCluster(2, 'nftlink-brp');
  const dir = mkdtempSync(join(tmpdir(), 'nftlink-brp-'));
  let proxy: ProxyProcess | undefined;
  let done = false;
  const teardown = async (): Promise<void> => {
    if (done) return;
    done = true;
    if (proxy) {
      await proxy.stop();
      liveProxies.delete(proxy);
    }
    cluster.remove();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const p of cluster.pods) await servePod(p, POD_PORT);
    writeFileSync(join(dir, 'web.json'), JSON.stringify(manifests(cluster.pods)));
    if (extra) writeFileSync(join(dir, 'extra.json'), JSON.stringify(extraManifests(extra.services, extra.endpoints)));
    // -v 4: the 'synced' lines (debug) are the repair's commit times.
    proxy = ProxyProcess.start(cluster.node, ['--manifests', dir, '--node-name', 'node', '--node-ip', CLUSTER.nodeIPv4, '--cluster-cidr', CLUSTER.podCIDRv4, '--layout', layout, '-v', '4']);
    liveProxies.add(proxy);
    if (!(await untilServed(cluster, extra ? 60_000 : 10_000))) throw new Error(`bench: the proxy (${layout}) never answered:\n${proxy.raw}`);
    return { cluster, proxy, teardown };
  } catch (err) {
    await teardown();
    throw err;
  }
}
