// An API server that cannot be reached when the proxy starts: the reflectors retry with growing
// backoff (logged), /healthz stays 200 (kube-proxy's "healthy while starting up": nothing is queued,
// so nothing is late), and the rules a previous run programmed stay as they were: a client loop to
// an existing service keeps getting answers. When the server comes back the proxy syncs and follows.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, tally, type Cluster } from '../../src/netns/cluster.js';
import { CLUSTER, probeLoop, service, slice, startCluster } from '../proxy/dataplane/helpers.js';
import { ApiServer, httpGet, ProxyFiles, ProxyProcess, sleep, tables, until, type ApiState, NODE, tearDown } from './harness.js';

const VIP = '198.18.200.40';
let c: Cluster;
let files: ProxyFiles;
let proxy: ProxyProcess | undefined;
let api: ApiServer | undefined;
let state: ApiState;
const detail = (): string => proxy?.raw.split('\n').slice(-20).join('\n') ?? '';
const config = (): string => files.config({ syncPeriod: '2s', minSyncPeriod: '100ms' });
const args = (): string[] => ['--config', config(), '--node-ip', CLUSTER.nodeIPv4, '--service-cidr', CLUSTER.serviceCIDRv4];

beforeAll(async () => {
  c = await startCluster(2, 'nle2eu');
  files = new ProxyFiles();
  // A previous run programs the service, then stops; so does the API server.
  api = await ApiServer.start(c.node);
  await api.upsert('nodes', NODE);
  await api.upsert('services', service({ name: 'web', clusterIPs: [VIP] }));
  await api.upsert('endpointslices', slice({ service: 'web', endpoints: [c.pods[0]!.ipv4] }));
  proxy = ProxyProcess.start(c.node, args());
  await until('the previous run to program the service', () => probe(c.client, VIP, 80, { timeoutMs: 500 }).answers[0] === c.pods[0]!.name, 15_000, detail);
  await proxy.stop();
  state = await api.stop();
  api = undefined;
}, 60_000);

afterAll(async () => {
  await tearDown({ proxy, api, cluster: c, files });
});

describe('unreachable API server', () => {
  it('retries with backoff, stays healthy while starting up, and leaves the programmed rules alone', async () => {
    const rulesBefore = c.node.exec('nft', ['list', 'table', 'ip', 'kube-proxy']);
    const loop = probeLoop(c.client, VIP, 80, 20);
    await loop.started;
    const started = Date.now();
    proxy = ProxyProcess.start(c.node, args());
    const serviceRetries = () => proxy!.logs('list/watch failed; retrying').filter((l) => l.kind === 'Service');
    // Three failed attempts, however long the proxy takes to start on a node busy with other tests
    // (a fixed 6 s once saw only two in CI).
    await until('three failed Service list/watch attempts', () => serviceRetries().length >= 3, 20_000, detail);
    // And more than 2 × syncPeriod (4 s) without a sync.
    await sleep(Math.max(0, started + 6000 - Date.now()));
    const retries = serviceRetries();
    expect(retries.length).toBeGreaterThanOrEqual(3);
    expect(String(retries[0]!.reason)).toContain('ECONNREFUSED');
    const delays = retries.map((l) => Number(l.retryInMs));
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(delays.at(-1)!).toBeGreaterThan(delays[0]!);
    expect(delays[0]).toBeGreaterThanOrEqual(800);

    // nftlink's /healthz (healthz.ts): unhealthy only when a queued change is older than 2 × syncPeriod.
    // With no API server nothing is ever queued, so it is 200, as kube-proxy's isHealthy() ("healthy
    // while it's starting up"); lastUpdated is the current time, as kube-proxy writes when healthy.
    const h = httpGet(c.client, `http://${CLUSTER.nodeIPv4}:10256/healthz`);
    expect(h.status).toBe(200);
    expect(httpGet(c.client, `http://${CLUSTER.nodeIPv4}:10256/livez`).status).toBe(200);
    // Never synced: the sync-timestamp metric has no sample yet.
    expect(httpGet(c.node, 'http://127.0.0.1:10249/metrics').body).not.toMatch(/^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{/m);

    // Nothing was written: the table is as the previous run left it, and traffic never stopped.
    expect(c.node.exec('nft', ['list', 'table', 'ip', 'kube-proxy'])).toBe(rulesBefore);
    expect(tables(c.node)).toContain('ip kube-proxy');

    // The API server comes back with a change: the proxy syncs it.
    api = await ApiServer.start(c.node, { state, beforeListen: async (a) => void (await a.upsert('endpointslices', slice({ service: 'web', endpoints: [c.pods[0]!.ipv4, c.pods[1]!.ipv4] }))) });
    await until('both pods to answer', () => Object.keys(tally(probe(c.client, VIP, 80, { count: 20, timeoutMs: 1000 }))).sort().join() === [c.pods[0]!.name, c.pods[1]!.name].sort().join(), 40_000, detail);
    const seen = await loop.stop();
    expect(seen.filter((a) => a.startsWith('error:'))).toEqual([]);
    expect(seen.length).toBeGreaterThan(50);
  }, 90_000);
});
