// The proxy's table watch subscribes to the kernel's ruleset events only once its first sync is
// done: while the cold start commits, no socket of the namespace listens on the nf_tables group, so
// the kernel builds no event for its objects. What another process commits before the watch is
// there is still repaired: the watch compares the ruleset's generation with the one it read before
// the first sync plus the proxy's own transactions (src/proxy/sync/own-commits.ts).

import { afterAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { Nftables } from '../../../src/nft/client.js';
import type { MonitoringConnection } from '../../../src/nft/index.js';
import { layoutConfigs } from '../../../src/config/layout-configs.js';
import { Proxier, type SyncReport } from '../../../src/proxy/proxier.js';
import type { ProxySource, SourceHandler } from '../../../src/proxy/source/source.js';
import { namespacesForFile } from '../../helpers/netns.js';
import type { Netns } from '../../../src/netns/netns.js';
import { proxySettings, recordingLogger } from '../dataplane/helpers.js';

const freshNetns = namespacesForFile(afterAll);

/** NFNLGRP_NFTABLES: the nf_tables multicast group, bit 6 of /proc/net/netlink's Groups. */
const NFTABLES_GROUP_BIT = 1 << (7 - 1);
const NETLINK_NETFILTER = 12;

/** Sockets of the namespace that listen on the nf_tables group (/proc/net/netlink, read inside it). */
function nftablesListeners(ns: Netns): number {
  const rows = ns.exec('cat', ['/proc/net/netlink']).trim().split('\n').slice(1);
  return rows.map((r) => r.trim().split(/\s+/)).filter((f) => Number(f[1]) === NETLINK_NETFILTER && (parseInt(f[3]!, 16) & NFTABLES_GROUP_BIT) !== 0).length;
}

class ListSource implements ProxySource {
  constructor(private readonly objects: { services: Service[]; slices: EndpointSlice[] }) {}
  async start(handler: SourceHandler): Promise<void> {
    for (const s of this.objects.services) handler.service('add', s);
    for (const s of this.objects.slices) handler.endpointSlice('add', s);
    handler.synced();
  }
  async stop(): Promise<void> {}
}

const WEB: Service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', resourceVersion: '1' },
  spec: { type: 'ClusterIP', clusterIP: '198.18.200.10', clusterIPs: ['198.18.200.10'], ipFamilies: ['IPv4'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
} as Service;
const WEB_SLICE: EndpointSlice = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'web-abc', namespace: 'default', resourceVersion: '1', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  endpoints: [{ addresses: ['198.18.1.2'], conditions: { ready: true } }],
} as EndpointSlice;

/**
 * A proxy on `ns`, whose connection runs `duringFirstCommit` right after its first commit returns,
 * and records how many sockets listened on the nf_tables group at each of its commits.
 */
function proxyOn(ns: Netns, duringFirstCommit: () => void = () => {}) {
  const nft = Nftables.open({ netns: ns.name });
  const listenersAtCommit: number[] = [];
  const connection: MonitoringConnection = {
    transaction: (o) => nft.transaction(o),
    commit: async (tx, o) => {
      listenersAtCommit.push(nftablesListeners(ns));
      const r = await nft.commit(tx, o);
      if (listenersAtCommit.length === 1) duringFirstCommit();
      return r;
    },
    check: (tx) => nft.check(tx),
    dump: (o) => nft.dump(o),
    dumpSetElements: (s) => nft.dumpSetElements(s),
    generation: () => nft.generation(),
    monitor: (o) => nft.monitor(o),
    close: () => nft.close(),
  };
  const settings = proxySettings({ nodeIPs: ['198.18.250.1'], clusterCIDRs: ['198.18.0.0/16'], serviceCIDRs: ['198.18.200.0/24'], localhostNodePorts: false });
  const log = recordingLogger();
  const reports: SyncReport[] = [];
  const proxier = new Proxier({
    source: new ListSource({ services: [WEB], slices: [WEB_SLICE] }),
    connect: () => connection,
    nodeName: settings.nodeName,
    layout: settings.layout,
    families: layoutConfigs(settings, ['ipv4']),
    minSyncPeriodMs: 0,
    syncPeriodMs: 60_000,
    log,
    onSync: (r) => reports.push(r),
  });
  return { proxier, log, reports, listenersAtCommit };
}

const repairWarnings = (log: ReturnType<typeof recordingLogger>) => log.records.filter((r) => r.msg === 'the tables were changed by another process; repairing');

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('the table watch starts after the first sync', () => {
  it('no socket listens to the nf_tables group while the cold start commits; the watch does once it is done, and repairs what comes after', async () => {
    const ns = freshNetns();
    const { proxier, log, reports, listenersAtCommit } = proxyOn(ns);
    try {
      await proxier.start();
      await until(() => reports.length === 1, 'the first sync');
      expect(listenersAtCommit.length).toBeGreaterThan(0);
      expect(listenersAtCommit.every((n) => n === 0)).toBe(true);
      expect(nftablesListeners(ns)).toBe(1);
      // Nobody else committed: no repair.
      await sleep(300);
      expect(repairWarnings(log)).toHaveLength(0);
      expect(reports).toHaveLength(1);
      // After the first sync, the monitor sees an outside change as it is committed.
      ns.exec('nft', ['flush', 'chain', 'ip', 'kube-proxy', 'services']);
      await until(() => reports.length > 1, 'the repair');
      expect(repairWarnings(log).at(-1)!.fields).not.toHaveProperty('lost');
      expect(ns.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', 'services'])).toContain('vmap @service-ips');
    } finally {
      await proxier.stop();
    }
  });

  it('a change another process commits during the first sync, before the watch is there, is found by the generation and repaired', async () => {
    const ns = freshNetns();
    const { proxier, log, reports } = proxyOn(ns, () => ns.exec('nft', ['flush', 'chain', 'ip', 'kube-proxy', 'services']));
    try {
      await proxier.start();
      await until(() => reports.length === 1, 'the first sync');
      // The first sync wrote the chain, then the flush emptied it, while no event could reach the proxy.
      expect(reports[0]!.results.find((r) => r.family === 'ip')).toMatchObject({ full: true });
      await until(() => reports.length > 1, 'the repair');
      expect(repairWarnings(log)[0]!.fields).toMatchObject({ lost: true });
      const repair = reports[1]!.results.find((r) => r.family === 'ip')!;
      expect(repair).toMatchObject({ full: true });
      expect(repair.operations).toBeGreaterThan(0);
      expect(ns.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', 'services'])).toContain('vmap @service-ips');
    } finally {
      await proxier.stop();
    }
  });
});
