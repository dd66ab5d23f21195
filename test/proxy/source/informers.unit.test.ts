import { kubeconfigYaml } from '../../helpers/kubeconfig.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InformerSource, PROXY_LABEL_SELECTOR } from '../../../src/proxy/source/informers.js';
import { connectApi } from '../../../src/k8s/kubeconfig.js';
import type { ReflectorOptions } from '../../../src/k8s/reflector.js';
import { silentLogger } from '../../../src/logging/logger.js';
import type { SourceHandler } from '../../../src/proxy/source/source.js';
import { FakeApiServer } from '../../helpers/fake-apiserver.mjs';

const NODE = 'node-a';

let api: FakeApiServer;
let dir: string;
let source: InformerSource | undefined;

beforeEach(async () => {
  api = new FakeApiServer();
  await api.start();
  dir = mkdtempSync(join(tmpdir(), 'nftlink-informer-'));
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** kubeadm's kube-proxy kubeconfig shape: the API server's address and the service account's tokenFile. */
function writeKubeconfig(token = 'sa-token-1'): string {
  writeFileSync(join(dir, 'token'), token);
  const path = join(dir, 'kubeconfig.conf');
  writeFileSync(path, kubeconfigYaml({ server: api.url, tokenFile: 'token' }));
  return path;
}

function service(name: string, labels: Record<string, string> = {}, port = 80) {
  return { kind: 'Service', apiVersion: 'v1', metadata: { name, namespace: 'default', labels }, spec: { type: 'ClusterIP', clusterIP: '198.18.96.10', ports: [{ port, protocol: 'TCP' }] } };
}

function slice(name: string, svc: string, ip: string) {
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ port: 8080, protocol: 'TCP' }],
  };
}

function node(name: string, extra: Record<string, unknown> = {}) {
  return { kind: 'Node', apiVersion: 'v1', metadata: { name, ...extra }, spec: { podCIDRs: ['198.18.1.0/24'] } };
}

interface Recorder extends SourceHandler {
  events: string[];
  syncedCount: number;
  problems: string[];
}

function recorder(): Recorder {
  const r: Recorder = {
    events: [],
    syncedCount: 0,
    problems: [],
    service: (t, o) => r.events.push(`Service ${t} ${o.metadata?.namespace}/${o.metadata?.name}`),
    endpointSlice: (t, o) => r.events.push(`EndpointSlice ${t} ${o.metadata?.namespace}/${o.metadata?.name}`),
    node: (t, o) => r.events.push(`Node ${t} ${o.metadata?.name}`),
    synced: () => r.syncedCount++,
    problem: (p) => r.problems.push(`${p.origin}: ${p.reason}`),
  };
  return r;
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const FAST: Omit<ReflectorOptions, 'log'> = { backoff: { initialMs: 50, maxMs: 400, jitter: 0 }, watchTimeoutSeconds: () => 60 };

async function startSource(reflector: Omit<ReflectorOptions, 'log'> = FAST): Promise<Recorder> {
  const rec = recorder();
  source = new InformerSource({ nodeName: NODE, kubeconfig: writeKubeconfig(), log: silentLogger, reflector });
  await source.start(rec);
  return rec;
}

describe('informer source', () => {
  it('lists everything first, then reports synced once, with kube-proxy selectors and the token file', async () => {
    api.upsert('services', service('web'));
    api.upsert('services', service('other-proxy', { 'service.kubernetes.io/service-proxy-name': 'cilium' }));
    api.upsert('services', service('headless', { 'service.kubernetes.io/headless': '' }));
    api.upsert('endpointslices', slice('web-abc', 'web', '198.18.1.5'));
    api.upsert('nodes', node(NODE));
    api.upsert('nodes', node('node-b'));

    const rec = await startSource();
    await waitFor('synced', () => rec.syncedCount === 1);
    expect(rec.events.sort()).toEqual(['EndpointSlice add default/web-abc', 'Node add node-a', 'Service add default/web']);

    const lists = api.requests.filter((r) => !r.watch);
    const svcList = lists.find((r) => r.resource === 'services')!;
    expect(svcList.query.get('labelSelector')).toBe('!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless');
    expect(PROXY_LABEL_SELECTOR).toBe(svcList.query.get('labelSelector'));
    expect(lists.find((r) => r.resource === 'endpointslices')!.query.get('labelSelector')).toBe(PROXY_LABEL_SELECTOR);
    expect(lists.find((r) => r.resource === 'nodes')!.query.get('fieldSelector')).toBe(`metadata.name=${NODE}`);
    expect(api.requests.every((r) => r.authorization === 'Bearer sa-token-1')).toBe(true);

    // Watches follow, from the list's resourceVersion.
    await waitFor('three watches', () => api.openWatches === 3);
    const watch = api.requests.find((r) => r.watch && r.resource === 'services')!;
    expect(watch.query.get('labelSelector')).toBe(PROXY_LABEL_SELECTOR);
    expect(svcList.query.get('resourceVersion')).toBeNull(); // a consistent read
    expect(Number(watch.query.get('resourceVersion'))).toBeGreaterThan(100);
    expect(watch.query.get('allowWatchBookmarks')).toBe('true');
    expect(rec.syncedCount).toBe(1);
  });

  it('lists in pages', async () => {
    for (let i = 0; i < 7; i++) api.upsert('services', service(`svc-${i}`));
    const rec = await startSource({ ...FAST, pageSize: 3 });
    await waitFor('synced', () => rec.syncedCount === 1);
    expect(rec.events.filter((e) => e.startsWith('Service add'))).toHaveLength(7);
    expect(api.requests.filter((r) => !r.watch && r.resource === 'services').map((r) => r.query.has('continue'))).toEqual([false, true, true]);
  });

  it('delivers a first list page by page, before asking for the next', async () => {
    for (let i = 0; i < 7; i++) api.upsert('services', service(`svc-${i}`));
    const rec = recorder();
    const listsSoFar: number[] = [];
    const handler: SourceHandler = {
      ...rec,
      service: (t, o, v) => {
        listsSoFar.push(api.requests.filter((r) => !r.watch && r.resource === 'services').length);
        rec.service(t, o, v);
      },
    };
    source = new InformerSource({ nodeName: NODE, kubeconfig: writeKubeconfig(), log: silentLogger, reflector: { ...FAST, pageSize: 3 } });
    await source.start(handler);
    await waitFor('synced', () => rec.syncedCount === 1);
    expect(rec.events.filter((e) => e.startsWith('Service add'))).toHaveLength(7);
    // Each page's objects went out while only the requests up to that page had been made.
    expect(listsSoFar).toEqual([1, 1, 1, 2, 2, 2, 3]);
  });

  it('compares a first list started over (continue token expired) with the pages it had delivered', async () => {
    for (let i = 0; i < 7; i++) api.upsert('services', service(`svc-${i}`));
    const rec = recorder();
    let changed = false;
    const handler: SourceHandler = {
      ...rec,
      service: (t, o, v) => {
        rec.service(t, o, v);
        if (changed) return;
        // While the first page is delivered: one of its objects goes, another changes, and the
        // history is compacted, so that the next page's continue token has expired (410).
        changed = true;
        api.remove('services', 'default', 'svc-1');
        api.upsert('services', service('svc-0', {}, 9090));
        api.compact();
        // The fake expires every continue token up to the compacted version: one more change puts
        // the list started over past it.
        api.upsert('endpointslices', slice('other-1', 'other', '198.18.1.7'));
      },
    };
    source = new InformerSource({ nodeName: NODE, kubeconfig: writeKubeconfig(), log: silentLogger, reflector: { ...FAST, pageSize: 3 } });
    await source.start(handler);
    await waitFor('synced', () => rec.syncedCount === 1);
    expect(rec.events.filter((e) => e.startsWith('Service'))).toEqual([
      'Service add default/svc-0',
      'Service add default/svc-1',
      'Service add default/svc-2',
      // The list started over, compared with what the first page gave.
      'Service delete default/svc-1',
      'Service update default/svc-0',
      'Service add default/svc-3',
      'Service add default/svc-4',
      'Service add default/svc-5',
      'Service add default/svc-6',
    ]);
    expect(api.requests.filter((r) => !r.watch && r.resource === 'services').map((r) => r.query.has('continue'))).toEqual([false, true, false, true]);
  });

  it('delivers watch events', async () => {
    const rec = await startSource();
    await waitFor('synced', () => rec.syncedCount === 1);
    await waitFor('watches', () => api.openWatches === 3);
    api.upsert('services', service('web'));
    api.upsert('endpointslices', slice('web-abc', 'web', '198.18.1.5'));
    api.upsert('services', service('web', {}, 8080));
    api.upsert('services', service('ignored', { 'service.kubernetes.io/service-proxy-name': 'x' }));
    api.upsert('nodes', node(NODE));
    api.upsert('nodes', node('node-b'));
    api.upsert('nodes', node(NODE, { deletionTimestamp: '2025-01-01T00:00:00Z' }));
    api.remove('endpointslices', 'default', 'web-abc');
    await waitFor('events', () => rec.events.length === 6);
    // Each resource's events in order (the three streams interleave freely).
    const ofKind = (kind: string): string[] => rec.events.filter((e) => e.startsWith(`${kind} `));
    expect(ofKind('Service')).toEqual(['Service add default/web', 'Service update default/web']);
    expect(ofKind('EndpointSlice')).toEqual(['EndpointSlice add default/web-abc', 'EndpointSlice delete default/web-abc']);
    expect(ofKind('Node')).toEqual(['Node add node-a', 'Node update node-a']);
  });

  it('reconnects a dropped watch with growing backoff and misses nothing', async () => {
    api.upsert('services', service('web'));
    const rec = await startSource();
    await waitFor('watches', () => api.openWatches === 3);
    const before = api.requests.length;

    // The connection drops, and the API server refuses the next watches for a while.
    api.failNext('services', 500, { watch: true, times: 3 });
    api.dropWatches();
    api.upsert('services', service('web', {}, 8080));
    api.upsert('services', service('api'));

    await waitFor('events after reconnect', () => rec.events.includes('Service add default/api'), 10_000);
    expect(rec.events).toEqual(['Service add default/web', 'Service update default/web', 'Service add default/api']);
    const retries = api.requests.slice(before).filter((r) => r.resource === 'services' && r.watch);
    expect(retries.length).toBe(4); // three refused, then the one that worked
    const gaps = retries.slice(1).map((r, i) => r.at - retries[i]!.at);
    // Drop → 50 ms → refused → 100 ms → refused → 200 ms → refused → 400 ms (the cap) → watching (jitter off).
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(190);
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    // No relist was needed: the watch resumed from its resourceVersion.
    expect(api.requests.filter((r) => r.resource === 'services' && !r.watch)).toHaveLength(1);
  });

  it('on 410 Gone relists and emits only the real differences', async () => {
    api.upsert('services', service('unchanged'));
    api.upsert('services', service('changed'));
    api.upsert('services', service('deleted'));
    api.upsert('services', service('recreated'));
    api.upsert('endpointslices', slice('unchanged-1', 'unchanged', '198.18.1.1'));
    const rec = await startSource();
    await waitFor('watches', () => api.openWatches === 3);
    rec.events.length = 0;

    // While the proxy cannot watch, things change and the history is compacted away.
    api.refuseWatches = true;
    api.dropWatches();
    api.upsert('services', service('changed', {}, 9090));
    api.remove('services', 'default', 'deleted');
    api.remove('services', 'default', 'recreated');
    api.upsert('services', service('recreated'));
    api.upsert('services', service('new'));
    api.upsert('endpointslices', slice('new-1', 'new', '198.18.1.9'));
    api.compact();
    api.refuseWatches = false;

    await waitFor('relist', () => rec.events.includes('EndpointSlice add default/new-1') && rec.events.includes('Service add default/new'), 10_000);
    await waitFor('watches again', () => api.openWatches === 3);
    expect(rec.events.filter((e) => e.startsWith('Service')).sort()).toEqual([
      'Service add default/new',
      'Service add default/recreated',
      'Service delete default/deleted',
      'Service delete default/recreated',
      'Service update default/changed',
    ]);
    expect(rec.events.filter((e) => e.includes('unchanged'))).toEqual([]);
    expect(source!.stats().services!.relistsAfterGone).toBe(1);
    expect(rec.syncedCount).toBe(1);
  });

  it('relists on a 410 status answer too', async () => {
    api.upsert('services', service('web'));
    api.goneAsHttpStatus = true;
    const rec = await startSource();
    await waitFor('watches', () => api.openWatches === 3);
    api.refuseWatches = true;
    api.dropWatches();
    api.upsert('services', service('web', {}, 1234));
    api.compact();
    api.refuseWatches = false;
    await waitFor('update', () => rec.events.includes('Service update default/web'), 10_000);
    expect(rec.events).toEqual(['Service add default/web', 'Service update default/web']);
  });

  it('re-watches at once when the server ends a watch at its timeoutSeconds', async () => {
    const rec = await startSource({ ...FAST, watchTimeoutSeconds: () => 1 });
    await waitFor('watches', () => api.openWatches === 3);
    await waitFor('second service watch', () => api.requests.filter((r) => r.watch && r.resource === 'services').length >= 2, 4000);
    const watches = api.requests.filter((r) => r.watch && r.resource === 'services');
    expect(watches[0]!.query.get('timeoutSeconds')).toBe('1');
    // The re-watch came right after the first ended (1 s): not a failure, no backoff, no relist.
    expect(watches[1]!.at - watches[0]!.at).toBeLessThan(3000);
    expect(source!.stats().services!.failures).toBe(0);
    expect(api.requests.filter((r) => !r.watch && r.resource === 'services')).toHaveLength(1);
    api.upsert('services', service('late'));
    await waitFor('event on the new watch', () => rec.events.includes('Service add default/late'));
  });
});

describe('kubeconfig', () => {
  it('uses a tokenFile user and keeps one keepalive agent', async () => {
    const conn = await connectApi({ kubeconfig: writeKubeconfig('t0ken') });
    try {
      expect(conn.server).toBe(api.url);
      expect((await conn.headers()).Authorization).toBe('Bearer t0ken');
      expect((conn.agent as unknown as { keepAlive: boolean }).keepAlive).toBe(true);
    } finally {
      conn.close();
    }
  });

  it('names the file when the token file is missing', async () => {
    const path = writeKubeconfig();
    rmSync(join(dir, 'token'));
    await expect(connectApi({ kubeconfig: path })).rejects.toThrow(/kubeconfig.conf: user default: cannot apply credentials: .*ENOENT.*token/);
  });

  it('refuses in-cluster configuration outside a cluster', async () => {
    await expect(connectApi({ env: {} })).rejects.toThrow(/not running in a cluster \(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set\)/);
  });

  it('uses the service account in a cluster', async () => {
    const sa = join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'in-cluster-token');
    writeFileSync(join(sa, 'ca.crt'), '');
    const conn = await connectApi({ env: { KUBERNETES_SERVICE_HOST: '198.18.96.1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountRoot: dir });
    try {
      expect(conn.origin).toBe('in-cluster');
      expect(conn.server).toBe('https://198.18.96.1:443');
      expect((await conn.headers()).Authorization).toBe('Bearer in-cluster-token');
    } finally {
      conn.close();
    }
  });
});
