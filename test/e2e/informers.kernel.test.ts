// The real informers end to end: `nftlink proxy --config` (kubeadm's KubeProxyConfiguration, whose
// kubeconfig has a tokenFile user) runs in the node namespace, lists and watches a fake API server
// there, and programs the node's ruleset; a client namespace sends real traffic through it. The API
// server then misbehaves (watches killed and refused, 410 Gone with slow relists, a restart with
// changes made while it was down) while a client loop checks that no service is ever lost.

import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, tally, type Cluster } from '../../src/netns/cluster.js';
import { CLUSTER, probeLoop, service, slice, startCluster } from '../proxy/dataplane/helpers.js';
import { ApiServer, ProxyFiles, ProxyProcess, scrapeMetrics, sample, TOKEN, until, sleep, NODE, tearDown } from './harness.js';

const VIP = '198.18.200.10';
const VIP2 = '198.18.200.11';

let c: Cluster;
let files: ProxyFiles;
let api: ApiServer;
let proxy: ProxyProcess;
let startedAt = 0;

const detail = (): string => proxy.raw.split('\n').slice(-30).join('\n');
const pods = (...i: number[]): string[] => i.map((n) => c.pods[n]!.ipv4);
/** The pods answering `count` requests to the VIP (errors as "error:CODE"). */
const answers = (ip = VIP, count = 12): Record<string, number> => tally(probe(c.client, ip, 80, { count, timeoutMs: 1000 }));
const onlyPods = (t: Record<string, number>, ...i: number[]): boolean => {
  const want = i.map((n) => c.pods[n]!.name).sort();
  return JSON.stringify(Object.keys(t).sort()) === JSON.stringify(want);
};

function webSlice(endpoints: string[], triggerTime?: Date) {
  const s = slice({ service: 'web', endpoints });
  if (triggerTime) s.metadata!.annotations = { 'endpoints.kubernetes.io/last-change-trigger-time': triggerTime.toISOString().replace(/\.\d+Z$/, 'Z') };
  return s;
}

beforeAll(async () => {
  c = await startCluster(3, 'nle2ei');
  files = new ProxyFiles();
  api = await ApiServer.start(c.node);
  await api.set('bookmarkMs', 300);
  await api.upsert('nodes', NODE);
  proxy = ProxyProcess.start(c.node, ['--config', files.config(), '--node-ip', CLUSTER.nodeIPv4, '--service-cidr', CLUSTER.serviceCIDRv4, '-v', process.env.E2E_V ?? '2']);
  // The first sync after the informers' first lists (an empty cluster) writes the table.
  await until('the first sync', () => proxy.lines.some((l) => l.msg === 'proxy started') && c.node.exec('nft', ['list', 'tables']).includes('kube-proxy'), 15_000, detail);
  // Taken once the proxy has said it started, so its change tracker (made before that) started
  // earlier: a node slowed by the other test files can take seconds to get there.
  startedAt = Date.now();
}, 60_000);

afterAll(async () => {
  // E2E_LOG=FILE keeps the proxy's log (E2E_V=4 for the sync details).
  if (process.env.E2E_LOG) writeFileSync(process.env.E2E_LOG, proxy.raw);
  await tearDown({ proxy, api, cluster: c, files });
});

describe('informers drive the ruleset', () => {
  it('a Service and its EndpointSlice created in the API server make connections work', async () => {
    await api.upsert('services', service({ name: 'web', clusterIPs: [VIP] }));
    await api.upsert('endpointslices', webSlice(pods(0)));
    await until('web to answer', () => onlyPods(answers(), 0), 10_000, detail);
    expect(answers(VIP, 20)).toEqual({ [c.pods[0]!.name]: 20 });

    // kube-proxy's requests: list+watch with its label selector, the Node by field selector, the
    // service account token from the kubeconfig's tokenFile.
    const { requests } = await api.stats();
    expect(requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    const q = (r: (typeof requests)[number]): URLSearchParams => new URLSearchParams(r.query);
    expect(requests.filter((r) => r.resource === 'services').every((r) => q(r).get('labelSelector') === '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless')).toBe(true);
    expect(requests.filter((r) => r.resource === 'nodes').every((r) => q(r).get('fieldSelector') === 'metadata.name=node')).toBe(true);
    expect(requests.filter((r) => r.watch).every((r) => q(r).get('allowWatchBookmarks') === 'true')).toBe(true);
  });

  it('changing the endpoints moves the traffic, and the programming latency reaches /metrics', async () => {
    // The endpoint controller's trigger time: the change "happened" 1.5 s before it reaches us. The
    // proxy ignores trigger times from before it started (kube-proxy's trackerStartTime): give it 4 s.
    await sleep(Math.max(0, startedAt + 4000 - Date.now()));
    await api.upsert('endpointslices', webSlice(pods(1, 2), new Date(Date.now() - 1500)));
    await until('traffic to move to pods 1 and 2', () => onlyPods(answers(VIP, 30), 1, 2), 10_000, detail);
    // Observed when the whole sync ends, which may be just after the traffic has moved.
    const observed = (text: string): number => sample(text, 'kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"}') ?? 0;
    await until('the programming latency to be observed', () => observed(scrapeMetrics(c.node)) >= 1, 5_000, detail);
    const m = scrapeMetrics(c.node);
    expect(m).toContain('# TYPE kubeproxy_network_programming_duration_seconds histogram');
    const count = observed(m);
    const sum = sample(m, 'kubeproxy_network_programming_duration_seconds_sum{ip_family="IPv4"}') ?? 0;
    expect(count).toBeGreaterThanOrEqual(1);
    // At least the 1.5 s head start (trigger times are whole seconds: up to 1 s more), well under a minute.
    expect(sum / count).toBeGreaterThanOrEqual(1.4);
    expect(sum / count).toBeLessThan(10);
    expect(sample(m, 'kubeproxy_network_programming_duration_seconds_bucket{le="1",ip_family="IPv4"}')).toBe(0);
  });

  it('bookmarks advance the watch: a dropped Node watch resumes from the bookmarked resourceVersion', async () => {
    // Nothing happens to Nodes; only bookmarks tell the Node reflector about newer resourceVersions.
    await api.upsert('services', service({ name: 'noise', clusterIPs: ['198.18.200.99'] }));
    const rv = (await api.stats()).rv;
    await sleep(900);
    const before = (await api.stats()).requests.length;
    expect((await api.stats()).bookmarks).toBeGreaterThan(0);
    await api.call('dropWatches');
    await until('the Node watch to reopen', async () => (await api.stats()).requests.slice(before).some((r) => r.resource === 'nodes' && r.watch), 10_000);
    const rewatch = (await api.stats()).requests.slice(before).find((r) => r.resource === 'nodes' && r.watch)!;
    expect(Number(new URLSearchParams(rewatch.query).get('resourceVersion'))).toBeGreaterThanOrEqual(rv);
    // A dropped watch is no relist: the Node was listed exactly once.
    expect((await api.stats()).requests.slice(before).filter((r) => r.resource === 'nodes' && !r.watch)).toHaveLength(0);
  });

  it('410 Gone with slow relists loses no service and converges', async () => {
    const loop = probeLoop(c.client, VIP, 80, 20);
    await loop.started;
    /**
     * Every reflector misses a change (its watch gets neither the events nor bookmarks), the history
     * is compacted, and the watches end as at their timeoutSeconds: the next one is 410 Gone.
     */
    const missAndCompact = async (endpoints: number): Promise<void> => {
      // Watches younger than 1 s that end without an event count as failures (reflector.ts): let them age.
      await sleep(1500);
      await api.set('pauseWatches', true);
      await api.upsert('endpointslices', webSlice(pods(endpoints)));
      await api.upsert('services', service({ name: 'noise', clusterIPs: ['198.18.200.99'], ports: [{ name: 'http', protocol: 'TCP', port: 81 }] }));
      await api.upsert('nodes', { ...NODE, metadata: { name: 'node', labels: { seen: String(endpoints) } } });
      await api.call('compact');
      await api.call('endWatches');
      await api.set('pauseWatches', false);
    };
    const relists = (): number => proxy.logs('watch expired (410 Gone): relisting').length;
    const before = relists();
    await api.set('listDelayMs', 1500);
    await api.set('watchDelayMs', 300);
    await missAndCompact(2);
    await until('the change to be programmed after 410 and a slow relist', () => onlyPods(answers(VIP, 20), 2), 30_000, detail);
    await until('every reflector to relist', () => relists() >= before + 3, 30_000, detail);
    await api.set('listDelayMs', 0);
    await api.set('watchDelayMs', 0);
    // 410 as an HTTP status too (older servers) instead of an ERROR event.
    await api.set('goneAsHttpStatus', true);
    await missAndCompact(0);
    await until('the change to be programmed after an HTTP 410', () => onlyPods(answers(VIP, 20), 0), 30_000, detail);
    await until('every reflector to relist again', () => relists() >= before + 6, 30_000, detail);
    const seen = await loop.stop();
    expect(seen.filter((a) => a.startsWith('error:'))).toEqual([]);
    expect((await api.stats()).gone).toBeGreaterThanOrEqual(6);
  });

  it('killed and refused watches lose no service; a change made meanwhile is programmed once watches work again', async () => {
    const loop = probeLoop(c.client, VIP, 80, 20);
    await loop.started;
    await api.set('refuseWatches', true);
    await api.call('dropWatches');
    await sleep(300);
    await api.upsert('endpointslices', webSlice(pods(1, 2)));
    await sleep(1500);
    // The change cannot have arrived: watches are refused, and a refused watch is no reason to relist.
    expect(onlyPods(answers(VIP, 20), 0)).toBe(true);
    await api.set('refuseWatches', false);
    await until('the change to be programmed', () => onlyPods(answers(VIP, 30), 1, 2), 20_000, detail);
    const seen = await loop.stop();
    expect(seen.filter((a) => a.startsWith('error:'))).toEqual([]);
    expect(seen.length).toBeGreaterThan(20);
    expect(proxy.logs('list/watch failed; retrying').length).toBeGreaterThan(0);
  });

  it('an API server restart loses no service; changes made while it was down are programmed afterwards', async () => {
    const loop = probeLoop(c.client, VIP, 80, 20);
    await loop.started;
    const state = await api.stop();
    await sleep(1000);
    api = await ApiServer.start(c.node, {
      state,
      beforeListen: async (a) => {
        await a.upsert('endpointslices', webSlice(pods(0, 1)));
        await a.upsert('services', service({ name: 'api2', clusterIPs: [VIP2] }));
        await a.upsert('endpointslices', slice({ service: 'api2', endpoints: pods(2) }));
      },
    });
    await until('both changes to be programmed', () => onlyPods(answers(VIP, 30), 0, 1) && onlyPods(answers(VIP2, 5), 2), 30_000, detail);
    const seen = await loop.stop();
    expect(seen.filter((a) => a.startsWith('error:'))).toEqual([]);
    // The reflectors came back by watching on from their resourceVersion (the server kept its history).
    expect(proxy.child.exitCode).toBeNull();
  });
});
