// Proxier end to end on the in-memory fake (nftlink/testing): no root, no namespace. What only the
// kernel can show (packets through the rules) stays in the data-plane tests beside this file.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, EventType, Service } from '../../src/k8s/objects.js';
import type { NftConnection } from '../../src/nft/index.js';
import { FakeNftables } from '../../src/testing/index.js';
import { Proxier, type ProxierOptions, type SyncReport } from '../../src/proxy/proxier.js';
import type { ProxySource, SourceHandler } from '../../src/proxy/source/source.js';
import type { SyncResult } from '../../src/proxy/sync/family-sync.js';
import { layoutConfigs } from '../../src/config/layout-configs.js';
import { proxySettings, recordingLogger } from './dataplane/helpers.js';

/** Services and EndpointSlices handed to the proxy as a source would, and changed at will. */
class ListSource implements ProxySource {
  private handler: SourceHandler | undefined;
  constructor(private readonly services: Service[], private readonly slices: EndpointSlice[]) {}
  async start(handler: SourceHandler): Promise<void> {
    this.handler = handler;
    for (const s of this.services) handler.service('add', s);
    for (const s of this.slices) handler.endpointSlice('add', s);
    handler.synced();
  }
  slice(type: EventType, slice: EndpointSlice): void {
    this.handler!.endpointSlice(type, slice);
  }
  async stop(): Promise<void> {}
}

function service(name: string, ip: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', resourceVersion: '1' },
    spec: { type: 'ClusterIP', clusterIP: ip, clusterIPs: [ip], ipFamilies: ['IPv4'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
  } as Service;
}

function slice(name: string, addresses: string[], version = '1'): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-abc`, namespace: 'default', resourceVersion: version, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  } as EndpointSlice;
}

/** Another socket to the same in-memory kernel: closing it leaves the kernel's ruleset as it is. */
function socketTo(fake: FakeNftables): NftConnection {
  return {
    transaction: (o) => fake.transaction(o),
    commit: (tx, o) => fake.commit(tx, o),
    check: (tx) => fake.check(tx),
    dump: (o) => fake.dump(o),
    dumpSetElements: (s) => fake.dumpSetElements(s),
    generation: () => fake.generation(),
    close: () => {},
  };
}

function proxierOn(fake: FakeNftables, source: ProxySource, opts: Partial<Pick<ProxierOptions, 'families' | 'fullSyncPeriodMs'>> & { connection?: NftConnection } = {}) {
  const connection = opts.connection ?? socketTo(fake);
  const settings = proxySettings({ nodeIPs: ['198.18.250.1'], clusterCIDRs: ['198.18.0.0/16'], serviceCIDRs: ['198.18.200.0/24'], localhostNodePorts: false });
  const log = recordingLogger();
  const proxier = new Proxier({
    source,
    connect: () => connection,
    nodeName: settings.nodeName,
    layout: settings.layout,
    families: opts.families ?? layoutConfigs(settings, ['ipv4']),
    minSyncPeriodMs: 0,
    syncPeriodMs: 60_000,
    ...(opts.fullSyncPeriodMs !== undefined ? { fullSyncPeriodMs: opts.fullSyncPeriodMs } : {}),
    log,
  });
  return { proxier, log };
}

const ipv4 = (r: SyncReport): SyncResult => r.results.find((x) => x.family === 'ip')!;
const WEB = [service('web', '198.18.200.10'), service('api', '198.18.200.11')];
/**
 * api with an external IP as well: a service chain of its own in both layouts (the slots layout
 * gives a port reached through its ClusterIP alone none: src/proxy/layout/slots/balance.ts).
 */
const WEB_API_EXTERNAL = [WEB[0]!, { ...WEB[1]!, spec: { ...WEB[1]!.spec, externalIPs: ['198.18.201.11'] } } as Service];
const WEB_SLICES = [slice('web', ['198.18.1.2', '198.18.2.2']), slice('api', ['198.18.3.2'])];

/** A source whose first lists come after start() returns, as the informers' do. */
class LateListSource extends ListSource {
  override async start(handler: SourceHandler): Promise<void> {
    setTimeout(() => void super.start(handler), 50);
  }
}

/** A LateListSource that records when it is started, synced and stopped, beside the commits. */
class RecordedSource extends LateListSource {
  constructor(readonly events: string[]) {
    super(WEB, WEB_SLICES);
  }
  override async start(handler: SourceHandler): Promise<void> {
    this.events.push('start');
    await super.start({
      ...handler,
      synced: () => {
        this.events.push('synced');
        handler.synced();
      },
    });
  }
  override async stop(): Promise<void> {
    this.events.push('stop');
  }
}

/** A socket to the fake kernel that records each commit, and each dump once it is read, into `events`. */
function recordingCommits(fake: FakeNftables, events: string[]): NftConnection {
  const socket = socketTo(fake);
  return {
    ...socket,
    commit: (tx, o) => {
      events.push('commit');
      return socket.commit(tx, o);
    },
    dump: async (o) => {
      const read = await socket.dump(o);
      events.push('read');
      return read;
    },
  };
}

/** Runs `fn` with V8's gc() (as --expose-gc gives it to bin/nftlink.js) recording its calls into `events`. */
async function withRecordedGc<T>(events: string[], fn: () => Promise<T>): Promise<T> {
  const exposed = (globalThis as { gc?: unknown }).gc;
  (globalThis as { gc?: unknown }).gc = (o: { type?: string }) => events.push(`gc ${o.type}`);
  try {
    return await fn();
  } finally {
    (globalThis as { gc?: unknown }).gc = exposed;
  }
}

describe('Proxier on the in-memory fake (no root)', () => {
  it('runOnce (proxy --once) reads the lists, stops the source, then syncs once; later events change nothing', async () => {
    const fake = new FakeNftables();
    const events: string[] = [];
    const source = new RecordedSource(events);
    const recorded = recordingCommits(fake, events);
    const { proxier } = proxierOn(fake, source, { connection: recorded });
    const report = await withRecordedGc(events, () => proxier.runOnce());
    expect(report.error).toBeUndefined();
    expect(ipv4(report).full).toBe(true);
    // The lists first, the source stopped, the empty table read, one cold start's commit, and what
    // the tracker let go collected once that first part is with the kernel.
    expect(events).toEqual(['start', 'synced', 'stop', 'read', 'commit', 'gc major']);
    const text = fake.render();
    expect(text).toContain('198.18.200.11');
    expect(text).toContain('198.18.3.2');
    // A source that delivers after it was stopped reaches a tracker that let go: nothing throws, nothing syncs.
    source.slice('update', slice('api', ['198.18.3.9'], '2'));
    await proxier.stop();
    expect(events).toEqual(['start', 'synced', 'stop', 'read', 'commit', 'gc major', 'stop']);
    expect(fake.render()).toBe(text);

    // Again onto the table it programmed (a restart): nothing to write, and the collection once the
    // table is read (not while: the pause would let the dump's replies pile up).
    events.length = 0;
    const again = proxierOn(fake, new RecordedSource(events), { connection: recorded });
    const restart = await withRecordedGc(events, () => again.proxier.runOnce());
    expect(restart.error).toBeUndefined();
    expect(ipv4(restart).operations).toBe(0);
    expect(events).toEqual(['start', 'synced', 'stop', 'read', 'gc major']);
    await again.proxier.stop();
  });

  it('a long-running proxy collects what reading its first lists left once its cold start\'s first part is with the kernel, or once a restart has read the table', async () => {
    const fake = new FakeNftables();
    const events: string[] = [];
    const recorded = recordingCommits(fake, events);
    const first = proxierOn(fake, new RecordedSource(events), { connection: recorded });
    const report = await withRecordedGc(events, async () => {
      await first.proxier.start();
      return first.proxier.syncNow();
    });
    expect(ipv4(report).full).toBe(true);
    // Unlike runOnce, the source keeps running (no stop) and the tracker keeps what it read.
    expect(events).toEqual(['start', 'synced', 'read', 'commit', 'gc major']);
    await first.proxier.stop();

    // A restart whose every sync is a full one: each reads the table back, and only the first
    // collects (what reading the lists left is gone after it).
    events.length = 0;
    const again = proxierOn(fake, new RecordedSource(events), { connection: recorded, fullSyncPeriodMs: 0 });
    const restart = await withRecordedGc(events, async () => {
      await again.proxier.start();
      await again.proxier.syncNow();
      return again.proxier.syncNow();
    });
    expect(ipv4(restart)).toMatchObject({ full: true, operations: 0 });
    expect(events.slice(0, 4)).toEqual(['start', 'synced', 'read', 'gc major']);
    expect(events.filter((e) => e === 'read').length).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.startsWith('gc'))).toEqual(['gc major']);
    await again.proxier.stop();
  });

  it('runOnce without the Node podCIDRs that detectLocalMode NodeCIDR needs ends with that error, writing nothing', async () => {
    const fake = new FakeNftables();
    const generation = await fake.generation();
    const { proxier } = proxierOn(fake, new ListSource(WEB, WEB_SLICES), { families: () => undefined });
    await expect(proxier.runOnce()).rejects.toThrow(/needs this node's Node with podCIDRs/);
    expect(await fake.generation()).toBe(generation);
    expect(fake.render()).not.toContain('198.18.200.10');
    await proxier.stop();
  });

  it('a sync asked for before the first lists arrive waits for them (informers)', async () => {
    const fake = new FakeNftables();
    const { proxier } = proxierOn(fake, new LateListSource(WEB, WEB_SLICES));
    await proxier.start();
    const report = await proxier.syncNow();
    expect(report.error).toBeUndefined();
    expect(fake.render()).toContain('198.18.200.11');
    expect(fake.render()).toContain('198.18.3.2');
    await proxier.stop();
  });

  it('a full sync programs every service, and a restart over the same ruleset writes nothing', async () => {
    const fake = new FakeNftables();
    const first = proxierOn(fake, new ListSource(WEB, WEB_SLICES));
    await first.proxier.start();
    const full = await first.proxier.syncNow();
    expect(full.error).toBeUndefined();
    expect(ipv4(full).full).toBe(true);
    expect(ipv4(full).operations).toBeGreaterThan(0);
    const text = fake.render();
    expect(text).toContain('198.18.200.10');
    expect(text).toContain('198.18.200.11');
    expect(text).toContain('198.18.3.2');
    await first.proxier.stop();

    const generation = await fake.generation();
    const again = proxierOn(fake, new ListSource(WEB, WEB_SLICES));
    await again.proxier.start();
    const restart = await again.proxier.syncNow();
    expect(restart.error).toBeUndefined();
    expect(ipv4(restart).full).toBe(true);
    expect(ipv4(restart).operations).toBe(0);
    expect(await fake.generation()).toBe(generation);
    expect(fake.render()).toBe(text);
    await again.proxier.stop();
  });

  it("a sync reports its commits' time within its duration, and none when it writes nothing", async () => {
    const fake = new FakeNftables();
    const socket = socketTo(fake);
    const slow: NftConnection = {
      ...socket,
      commit: async (tx, o) => {
        await new Promise((r) => setTimeout(r, 40));
        return socket.commit(tx, o);
      },
    };
    const source = new ListSource(WEB, WEB_SLICES);
    const { proxier } = proxierOn(fake, source, { connection: slow });
    await proxier.start();
    await proxier.syncNow();
    source.slice('update', slice('web', ['198.18.1.2', '198.18.2.2', '198.18.4.2'], '2'));
    const partial = ipv4(await proxier.syncNow());
    expect(partial.operations).toBeGreaterThan(0);
    expect(partial.commitMs).toBeGreaterThanOrEqual(39);
    expect(partial.commitMs).toBeLessThanOrEqual(partial.durationMs);
    const idle = ipv4(await proxier.syncNow());
    expect(idle.operations).toBe(0);
    expect(idle.commitMs).toBe(0);
    await proxier.stop();
  });

  it('a partial sync changes only the service whose endpoints changed', async () => {
    const fake = new FakeNftables();
    const source = new ListSource(WEB_API_EXTERNAL, WEB_SLICES);
    const { proxier } = proxierOn(fake, source);
    await proxier.start();
    await proxier.syncNow();
    const before = fake.render();
    source.slice('update', slice('web', ['198.18.1.2', '198.18.2.2', '198.18.4.2'], '2'));
    const partial = await proxier.syncNow();
    expect(partial.error).toBeUndefined();
    expect(ipv4(partial).full).toBe(false);
    expect(ipv4(partial).operations).toBeGreaterThan(0);
    const after = fake.render();
    expect(after).toContain('198.18.4.2');
    // Only web's chain is written; api's chain stays as it was.
    expect(ipv4(partial).chainsWritten).toBeLessThanOrEqual(1);
    const apiChain = (t: string): string => {
      const at = t.indexOf('default/api/tcp/http {');
      return t.slice(at, t.indexOf('}', at));
    };
    expect(apiChain(before).length).toBeGreaterThan(30);
    expect(apiChain(after)).toBe(apiChain(before));
    await proxier.stop();
  });

  it('a refused operation leaves out exactly its service port, which returns once its objects change', async () => {
    const fake = new FakeNftables();
    // The kernel refuses the first rule that DNATs to api's endpoint (as it would a rule it cannot load).
    const isApiRule = (op: { kind: string; rule?: { chain: string } }): boolean => op.kind === 'rule' && op.rule!.chain.includes('default/api/');
    fake.refuse((op) => isApiRule(op as never), 'EINVAL');
    const source = new ListSource(WEB_API_EXTERNAL, WEB_SLICES);
    const { proxier, log } = proxierOn(fake, source);
    await proxier.start();
    const report = await proxier.syncNow();
    expect(report.error).toBeUndefined();
    expect(ipv4(report).excluded).toBe(1);
    const left = log.records.filter((r) => r.msg === 'service port left out: the kernel refused its objects');
    expect(left).toHaveLength(1);
    expect(String(left[0]!.fields.servicePort)).toContain('default/api');
    const text = fake.render();
    expect(text).toContain('198.18.200.10'); // web is programmed
    expect(text).not.toContain('198.18.3.2'); // api is not

    // api's objects change: it gets another chance, and the kernel takes it this time.
    source.slice('update', slice('api', ['198.18.3.2', '198.18.3.3'], '2'));
    const retry = await proxier.syncNow();
    expect(retry.error).toBeUndefined();
    expect(ipv4(retry).excluded).toBe(0);
    expect(fake.render()).toContain('198.18.3.3');
    await proxier.stop();
  });
});
