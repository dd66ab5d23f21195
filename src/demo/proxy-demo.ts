// The proxy demo: a node, a client and three pods (namespaces), a ClusterIP + NodePort service
// written as manifests, `nftlink proxy` programming kube-proxy's ruleset into the node over netlink,
// and real HTTP requests following the service as the manifests scale it 3 -> 1 -> 0 -> 3.

import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProxyProcess } from '../netns/proxy-process.js';
import { CLUSTER, createCluster, probe, servePod, tally, type Cluster } from '../netns/cluster.js';
import { chainName, serviceChainBase } from '../proxy/layout/names.js';
import { setTimeout as sleep } from 'node:timers/promises';

const CLUSTER_IP = '198.18.200.10';
const NODE_PORT = 30080;
const REQUESTS = 30;
/**
 * Connections tried while the service has no endpoints. The kernel rate-limits the ICMP errors a
 * reject sends (net.ipv4.icmp_ratelimit: a burst, then one per second per destination), so past
 * the burst each refused connection waits for its SYN to be sent again, a second later: 30 of them
 * took 30 s, longer than the wait for the change itself.
 */
const REFUSED_REQUESTS = 5;

function manifests(c: Cluster, endpoints: number): string {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'demo' },
    spec: { type: 'NodePort', clusterIP: CLUSTER_IP, clusterIPs: [CLUSTER_IP], ipFamilies: ['IPv4'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: NODE_PORT }] },
  };
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-demo', namespace: 'demo', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: c.pods.slice(0, endpoints).map((p) => ({ addresses: [p.ipv4], conditions: { ready: true }, nodeName: 'demo-node', targetRef: { kind: 'Pod', name: p.name } })),
  };
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [service, slice] }, null, 2);
}

function writeAtomically(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

function show(title: string, counts: Record<string, number>): void {
  const parts = Object.entries(counts)
    .sort()
    .map(([k, v]) => `${k}: ${v}`);
  console.log(`  ${title.padEnd(34)} ${parts.join(', ')}`);
}

/** Waits until the proxy has programmed the change: the probe's answers match what we expect. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function main(): Promise<void> {
  const cluster = createCluster(3, 'nftlink-demo');
  const dir = mkdtempSync(join(tmpdir(), 'nftlink-demo-'));
  const file = join(dir, 'web.json');
  let proxy: ProxyProcess | undefined;
  try {
    cluster.pods.forEach((p, i) => (p.name = `web-${i + 1}`));
    await Promise.all(cluster.pods.map((p) => servePod(p)));
    writeAtomically(file, manifests(cluster, 3));
    const args = ['--manifests', dir, '--netns', cluster.node.name, '--node-name', 'demo-node', '--node-ip', CLUSTER.nodeIPv4, '--cluster-cidr', CLUSTER.podCIDRv4, '--service-cidr', CLUSTER.serviceCIDRv4, '--min-sync-period', '200ms'];
    console.log(`# nftlink proxy watches ${dir} and programs the node namespace:\n  nftlink proxy ${args.join(' ')}\n`);
    const px = (proxy = ProxyProcess.startHere(args));
    void px.exit.then(({ code }) => {
      if (code) console.error(`proxy exited with ${code}:\n${px.raw}`);
    });

    const fromPod = (count: number) => tally(probe(cluster.pods[0]!.ns, CLUSTER_IP, 80, { count }));
    const fromClient = (count: number) => tally(probe(cluster.client, CLUSTER.nodeIPv4, NODE_PORT, { count }));
    const answered = (t: Record<string, number>, pods: number): boolean => Object.keys(t).filter((k) => k.startsWith('web-')).length === pods;

    for (const [step, n] of [['3 endpoints', 3], ['scaled to 1', 1], ['scaled to 0', 0], ['back to 3', 3]] as const) {
      writeAtomically(file, manifests(cluster, n));
      const count = n === 0 ? REFUSED_REQUESTS : REQUESTS;
      let pod: Record<string, number> = {};
      await until(() => {
        pod = fromPod(count);
        return n === 0 ? Object.keys(pod).every((k) => k.startsWith('error:')) : answered(pod, n) || (n === 3 && Object.keys(pod).length === 3);
      }, `traffic to follow "${step}"`);
      console.log(`# ${step}: ${count} requests each`);
      show(`pod web-1 -> ClusterIP ${CLUSTER_IP}:80`, pod);
      show(`client -> NodePort ${CLUSTER.nodeIPv4}:${NODE_PORT}`, fromClient(count));
    }
    const chain = chainName.cluster(serviceChainBase({ namespace: 'demo', name: 'web', protocol: 'TCP', portName: 'http' }));
    console.log(`\n# what nft lists of it in the node (the service's chain, the slots map its endpoints live in, the dispatch map):`);
    for (const args of [['list', 'chain', 'ip', 'kube-proxy', chain], ['list', 'map', 'ip', 'kube-proxy', 'endpoints-0'], ['list', 'map', 'ip', 'kube-proxy', 'service-ips']]) {
      for (const line of cluster.node.exec('nft', args).split('\n').filter((l) => l.trim() && !/^(table|})/.test(l))) console.log(`  ${line.trim()}`);
    }
    console.log('\ndemo ok: traffic followed the manifests through 3, 1, 0 and 3 endpoints');
  } finally {
    await proxy?.stop();
    cluster.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${(err as Error).message}`);
  process.exitCode = 1;
});
