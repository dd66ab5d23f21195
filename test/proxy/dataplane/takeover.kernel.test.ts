// Taking over a table kube-proxy wrote, under traffic, and the way back (docs/operating.md,
// "Rolling back to kube-proxy"). On a node with real pods, kube-proxy's own ruleset for a set of
// services is loaded with `nft -f`, in two shapes: the one of upstream's unit-test goldens (before
// the 1.36 masquerading rework: kube-proxy-ruleset.ts writes it for this cluster's addresses) and
// kube-proxy 1.37's (`nftlink render --layout kube-proxy` of the same services). `nftlink proxy`
// then starts on the same services while clients loop through them: no connection to a service
// with ready endpoints may fail, the final table must be what nftlink writes on a cold start in a
// fresh namespace, and nothing of the old layout may be left. Then the rollback: kube-proxy's
// full sync written over nftlink's kube-proxy-layout table, and `nftlink cleanup` followed by
// kube-proxy's start, both under the same loops. Failed-connection counts go to the test output.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from '../../../src/netns/cluster.js';
import { Netns } from '../../../src/netns/netns.js';
import { renderProxy, cleanupCommand } from '../../../src/cli/proxy.js';
import { Nftables, renderCommands } from '../../../src/nft/index.js';
import type { Operation } from '../../../src/nft/operations.js';
import { modelLines, parseTable, type TableModel } from '../layout/upstream/nft-model.js';
import { oldKubeProxyRuleset, type OldServicePort } from './kube-proxy-ruleset.js';
import {
  answered,
  CLUSTER,
  ManifestDir,
  NODE_NAME,
  probeLoop,
  service,
  sleep,
  slice,
  startCluster,
  startProxy,
  TEST_LAYOUT,
  type Cluster,
  type ProbeLoop,
  type RunningProxy,
} from './helpers.js';

const P80 = { name: 'p80', protocol: 'TCP' as const, port: 80, targetPort: 8080 };
const EP_PORTS = [{ name: 'p80', protocol: 'TCP' as const, port: 8080 }];

/**
 * upstream's TestOverallNFTablesRules services (less the load balancer with source ranges), on
 * this cluster's addresses: ClusterIP with one endpoint, Local policy without a local endpoint,
 * NodePort, external IP with two endpoints, ClientIP affinity, no endpoints.
 */
function ports(c: Cluster): OldServicePort[] {
  const pod = (i: number, local = true) => ({ ip: c.pods[i]!.ipv4, port: 8080, local });
  return [
    { namespace: 'ns1', name: 'svc1', portName: 'p80', clusterIP: '198.18.200.41', port: 80, endpoints: [pod(0)] },
    {
      namespace: 'ns2',
      name: 'svc2',
      portName: 'p80',
      clusterIP: '198.18.200.42',
      port: 80,
      nodePort: 30001,
      externalIPs: ['198.19.50.22'],
      externalTrafficPolicy: 'Local',
      endpoints: [pod(0, false)],
    },
    { namespace: 'ns3', name: 'svc3', portName: 'p80', clusterIP: '198.18.200.43', port: 80, nodePort: 30003, endpoints: [pod(1)] },
    { namespace: 'ns4', name: 'svc4', portName: 'p80', clusterIP: '198.18.200.44', port: 80, externalIPs: ['198.19.50.33'], endpoints: [pod(1), pod(2)] },
    { namespace: 'ns5', name: 'svc5', portName: 'p80', clusterIP: '198.18.200.45', port: 80, affinitySeconds: 10800, endpoints: [pod(2)] },
    { namespace: 'ns6', name: 'svc6', portName: 'p80', clusterIP: '198.18.200.46', port: 80, endpoints: [] },
  ];
}

/** The same services as manifests. */
function writeManifests(dir: ManifestDir, c: Cluster): void {
  for (const sp of ports(c)) {
    const type = sp.externalTrafficPolicy ? 'LoadBalancer' : sp.nodePort !== undefined ? 'NodePort' : 'ClusterIP';
    dir.write(
      sp.name,
      service({
        name: sp.name,
        namespace: sp.namespace,
        type,
        clusterIPs: [sp.clusterIP],
        ports: [{ ...P80, ...(sp.nodePort !== undefined ? { nodePort: sp.nodePort } : {}) }],
        ...(sp.externalIPs ? { externalIPs: sp.externalIPs } : {}),
        ...(sp.externalTrafficPolicy ? { externalTrafficPolicy: sp.externalTrafficPolicy } : {}),
        ...(sp.affinitySeconds !== undefined ? { affinitySeconds: sp.affinitySeconds } : {}),
      }),
      slice({
        service: sp.name,
        namespace: sp.namespace,
        ports: EP_PORTS,
        endpoints: sp.endpoints.map((e) => ({ ip: e.ip, nodeName: e.local ? NODE_NAME : 'other-node' })),
      }),
    );
  }
}

/** The services with ready endpoints the clients loop through, from the client namespace. */
const TARGETS: { what: string; host: string; port: number }[] = [
  { what: 'ClusterIP, one endpoint (svc1)', host: '198.18.200.41', port: 80 },
  { what: 'NodePort (svc3)', host: CLUSTER.nodeIPv4, port: 30003 },
  { what: 'external IP, two endpoints (svc4)', host: '198.19.50.33', port: 80 },
  { what: 'ClusterIP with ClientIP affinity (svc5)', host: '198.18.200.45', port: 80 },
];

/** kube-proxy 1.37's ruleset for the manifests: the kube-proxy layout's render (both families). */
async function ruleset137(dir: ManifestDir): Promise<string> {
  return renderProxy([
    '--manifests', dir.path,
    '--layout=kube-proxy',
    `--node-name=${NODE_NAME}`,
    `--node-ip=${CLUSTER.nodeIPv4},${CLUSTER.nodeIPv6}`,
    `--cluster-cidr=${CLUSTER.podCIDRv4},${CLUSTER.podCIDRv6}`,
    `--service-cidr=${CLUSTER.serviceCIDRv4},${CLUSTER.serviceCIDRv6}`,
    '--masquerade-bit=14',
    '--feature-gates=KubeProxyNFTablesLocalhostNodePorts=false',
  ]);
}

/**
 * kube-proxy's first full sync over an existing table, as one `nft -f` transaction: every chain
 * and set it owns is added and flushed, then written whole (kube-proxy's syncProxyRules with
 * needFullSync), except the affinity sets, whose pins it keeps. What it does not know stays.
 */
function asFullSync(text: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    out.push(line);
    const m = /^add (chain|set|map) (\S+ \S+) (\S+)/.exec(line);
    if (m && !line.includes('dynamic')) out.push(`flush ${m[1]} ${m[2]} ${m[3]}`);
  }
  return out.join('\n');
}

/** Both kube-proxy tables of a namespace, with the elements of dynamic sets (clients pinned by affinity) left out. */
async function tables(netns: string): Promise<{ ip: TableModel; ip6: TableModel }> {
  const nft = Nftables.open({ netns });
  let text: string;
  try {
    // The dump as `add` commands (elements apart from their set), which nft-model.ts reads.
    const rs = await nft.dump();
    const ops: Operation[] = [
      ...rs.tables.map((table): Operation => ({ verb: 'add', kind: 'table', table })),
      ...rs.sets.filter((s) => !s.anonymous).flatMap((s): Operation[] => [
        { verb: 'add', kind: 'set', set: { ...s, elements: [] } },
        { verb: 'add', kind: 'element', set: s, elements: (s.elements ?? []).map(({ expires: _, ...e }) => e) },
      ]),
      ...rs.chains.map((chain): Operation => ({ verb: 'add', kind: 'chain', chain })),
      ...rs.rules.map((rule): Operation => ({ verb: 'add', kind: 'rule', rule })),
    ];
    text = renderCommands(ops, { knownSets: rs.sets });
  } finally {
    nft.close();
  }
  const strip = (m: TableModel): TableModel => {
    for (const [name, decl] of m.sets) if (decl.includes('dynamic')) m.elements.delete(name);
    return m;
  };
  return { ip: strip(parseTable(text, 'ip')), ip6: strip(parseTable(text, 'ip6')) };
}

const lines = (t: { ip: TableModel; ip6: TableModel }): string[] => [...modelLines(t.ip).map((l) => `ip ${l}`), ...modelLines(t.ip6).map((l) => `ip6 ${l}`)];

/** Starts one loop per target from the client; resolves when each has made its first attempt. */
async function startLoops(c: Cluster): Promise<ProbeLoop[]> {
  const loops = TARGETS.map((t) => probeLoop(c.client, t.host, t.port, 5));
  await Promise.all(loops.map((l) => l.started));
  return loops;
}

/** Stops the loops; logs and returns the failed attempts per target. */
async function stopLoops(loops: ProbeLoop[], phase: string): Promise<{ total: number; failed: number }[]> {
  const results = await Promise.all(loops.map((l) => l.stop()));
  return results.map((answers, i) => {
    const failed = answers.length - answered({ answers, peers: [], times: [] }).length;
    console.log(`[${TEST_LAYOUT}] ${phase}: ${TARGETS[i]!.what}: ${failed} failed of ${answers.length} connections`);
    return { total: answers.length, failed };
  });
}

/** Every target answers from the client (the loaded ruleset works before anything else happens). */
function expectServing(c: Cluster): void {
  for (const t of TARGETS) expect(answered(probe(c.client, t.host, t.port, { count: 3 })), t.what).toHaveLength(3);
}

/** What nftlink writes on a cold start for these services, in a fresh namespace. */
async function coldStart(dir: ManifestDir): Promise<{ ip: TableModel; ip6: TableModel }> {
  const ns = Netns.create('nlp-cold');
  try {
    const px = await startProxy({ node: ns } as unknown as Cluster, dir);
    await px.stop();
    return await tables(ns.name);
  } finally {
    ns.remove();
  }
}

/** The tables `text` leaves in a fresh namespace (nft -f): kube-proxy's table as a kernel holds it. */
async function loadedFresh(text: string): Promise<{ ip: TableModel; ip6: TableModel }> {
  const ns = Netns.create('nlp-kp');
  try {
    ns.nftApply(text);
    return await tables(ns.name);
  } finally {
    ns.remove();
  }
}

/**
 * The node's tables once they hold nothing `want` does not: stale chains are flushed by the first
 * sync and deleted by a later one, a second on. Gives up after 5 s (the caller's checks then fail).
 */
async function settled(c: Cluster, want: { ip: TableModel; ip6: TableModel }): Promise<{ ip: TableModel; ip6: TableModel }> {
  const deadline = Date.now() + 5000;
  let now = await tables(c.node.name);
  while ((oldLeftovers(now.ip, want.ip).length || oldLeftovers(now.ip6, want.ip6).length) && Date.now() < deadline) {
    await sleep(200);
    now = await tables(c.node.name);
  }
  return now;
}

/** Old-layout objects nftlink's layout does not use, by name, in the node's ip table. */
function oldLeftovers(t: TableModel, cold: TableModel): string[] {
  const names = [...t.chains.keys(), ...t.sets.keys()];
  const want = new Set([...cold.chains.keys(), ...cold.sets.keys()]);
  return names.filter((n) => !want.has(n));
}

const SHAPES = [
  { shape: 'kube-proxy before 1.36 (upstream goldens)', ruleset: (c: Cluster) => oldKubeProxyRuleset({ podCIDR: CLUSTER.podCIDRv4, serviceCIDR: CLUSTER.serviceCIDRv4, nodeIP: CLUSTER.nodeIPv4 }, ports(c)) },
  { shape: 'kube-proxy 1.37', ruleset: (_c: Cluster, dir: ManifestDir) => ruleset137(dir) },
] as const;

for (const { shape, ruleset } of SHAPES) {
  describe(`taking over ${shape}'s table`, () => {
    let c: Cluster;
    let dir: ManifestDir;
    let px: RunningProxy | undefined;
    let cold: { ip: TableModel; ip6: TableModel };

    beforeAll(async () => {
      dir = new ManifestDir();
      c = await startCluster(3, 'nlp-take');
      writeManifests(dir, c);
      cold = await coldStart(dir);
    });
    afterAll(async () => {
      await px?.stop();
      c?.remove();
      dir?.cleanup();
    });

    it('drops no connection, ends as a cold start, and leaves nothing of the old layout', async () => {
      c.node.nftApply(await ruleset(c, dir));
      expectServing(c);
      // What nftlink must remove: the old layout's (mark-for-masquerade, per-endpoint chains) or,
      // from 1.37's table, what the slots layout does not use.
      const before = oldLeftovers((await tables(c.node.name)).ip, cold.ip);
      if (shape.includes('before')) expect(before).toContain('mark-for-masquerade');
      console.log(`[${TEST_LAYOUT}] takeover of ${shape}: ${before.length} objects to remove`);
      const loops = await startLoops(c);
      await sleep(300);
      px = await startProxy(c, dir);
      const now = await settled(c, cold);
      await sleep(300);
      const counts = await stopLoops(loops, `takeover of ${shape}`);
      for (const [i, r] of counts.entries()) {
        expect(r.total, TARGETS[i]!.what).toBeGreaterThan(20);
        expect(r.failed, TARGETS[i]!.what).toBe(0);
      }
      expect(oldLeftovers(now.ip, cold.ip)).toEqual([]);
      expect(lines(now)).toEqual(lines(cold));
      expect(px.log.records.filter((r) => r.level === 'error')).toEqual([]);
      // kube-proxy 1.37's table in the kube-proxy layout is already what nftlink writes.
      const ops = px.reports[0]!.results.reduce((a, r) => a + r.operations, 0);
      console.log(`[${TEST_LAYOUT}] takeover of ${shape}: the first sync wrote ${ops} operations`);
      if (TEST_LAYOUT === 'kube-proxy' && !shape.includes('before')) expect(ops).toBe(0);
    });
    it('rolls back: kube-proxy 1.37 adopts the table in its first full sync, dropping nothing', async () => {
      await px!.stop();
      if (TEST_LAYOUT !== 'kube-proxy') {
        // From the slots layout, the documented first step: nftlink restarted with
        // --layout kube-proxy rewrites its own table into kube-proxy's shapes, under traffic.
        const loops = await startLoops(c);
        await sleep(200);
        px = await startProxy(c, dir, { layout: 'kube-proxy' });
        const kp = await loadedFresh(await ruleset137(dir));
        const step1 = await settled(c, kp);
        expect([...oldLeftovers(step1.ip, kp.ip), ...oldLeftovers(step1.ip6, kp.ip6)], 'slots objects left').toEqual([]);
        await sleep(300);
        const counts = await stopLoops(loops, 'rollback step 1, nftlink restarted with --layout kube-proxy');
        for (const [i, r] of counts.entries()) expect(r.failed, TARGETS[i]!.what).toBe(0);
        await px.stop();
      }
      const text = await ruleset137(dir);
      const loops = await startLoops(c);
      await sleep(200);
      c.node.nftApply(asFullSync(text));
      await sleep(300);
      const counts = await stopLoops(loops, 'rollback, kube-proxy adopting the table');
      for (const [i, r] of counts.entries()) expect(r.failed, TARGETS[i]!.what).toBe(0);
      expectServing(c);
      // The table is then exactly kube-proxy's: nothing of nftlink's is left behind.
      const now = await tables(c.node.name);
      const kp = await loadedFresh(text);
      expect([...oldLeftovers(now.ip, kp.ip), ...oldLeftovers(now.ip6, kp.ip6)]).toEqual([]);
      expect(lines(now)).toEqual(lines(kp));
    });

    it('rolls back: nftlink cleanup removes everything, then kube-proxy starts (connections fail in between)', async () => {
      const loops = await startLoops(c);
      await sleep(200);
      await cleanupCommand(['--netns', c.node.name]);
      expect(c.node.exec('nft', ['list', 'tables'])).not.toContain('kube-proxy');
      // kube-proxy's start: its first sync comes after it has listed Services and EndpointSlices.
      await sleep(1000);
      c.node.nftApply(await ruleset137(dir));
      await sleep(300);
      const counts = await stopLoops(loops, 'rollback, cleanup then kube-proxy');
      expect(counts.reduce((a, r) => a + r.failed, 0)).toBeGreaterThan(0);
      expectServing(c);
    });
  });
}
