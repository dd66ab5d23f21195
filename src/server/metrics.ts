// kube-proxy's Prometheus metrics (pkg/proxy/metrics/metrics.go), under the same names, types,
// help texts, buckets and labels, so dashboards and alerts written for kube-proxy's nftables mode
// work unchanged. Metrics that kube-proxy labels by ip_family ("IPv4", "IPv6", since 1.33) are
// labelled here too; the change counters and pending gauges are shared by both families there and
// here. The full/partial duration histograms are kube-proxy's iptables-mode ones: nftlink does both
// kinds of sync in nftables mode, so it reports them as well.
//
// recordSync() feeds them from a Proxier SyncReport; pending and total change counts are read at
// scrape time from the change tracker, as kube-proxy updates them on every event.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ChangeTotals, PendingChanges } from '../proxy/model/tracker.js';
import type { IPFamily, ProxyState } from '../proxy/model/types.js';
import { categorizeEndpoints } from '../proxy/model/categorize.js';
import { localPolicyPorts } from '../proxy/model/port-index.js';
import type { SyncReport } from '../proxy/proxier.js';
import type { SyncResult } from '../proxy/sync/family-sync.js';

/** kube-proxy's ip_family label values (v1.IPFamily). */
export type IPFamilyLabel = 'IPv4' | 'IPv6';

const FAMILY_LABEL: Record<IPFamily, IPFamilyLabel> = { ipv4: 'IPv4', ipv6: 'IPv6' };
/** SyncResult.family is the nftables family of the table. */
const NFT_FAMILY_LABEL: Record<string, IPFamilyLabel> = { ip: 'IPv4', ip6: 'IPv6' };

/** prometheus.ExponentialBuckets(0.001, 2, 15): 1 ms to ~16 s. */
const SYNC_DURATION_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

/**
 * metrics.MergeBuckets(Linear(0.25, 0.25, 2), Linear(1, 1, 59), Linear(60, 5, 12), Linear(120, 30, 7)):
 * MergeBuckets starts from a 0 bucket, so latencies from a skewed clock that come out negative land there.
 */
const NETWORK_PROGRAMMING_BUCKETS = [
  0,
  0.25,
  0.5,
  ...Array.from({ length: 59 }, (_, i) => 1 + i),
  ...Array.from({ length: 12 }, (_, i) => 60 + 5 * i),
  ...Array.from({ length: 7 }, (_, i) => 120 + 30 * i),
];

export interface ProxyMetricsOptions {
  /** The tracker's pending changes (Proxier.pending()), read at scrape time. */
  pending?: () => PendingChanges;
  /** The tracker's cumulative change counts (ChangeTracker.changeTotals()), read at scrape time. */
  changeTotals?: () => ChangeTotals;
  /** Families the proxy programs: a failed sync counts a failure for each one that did not sync. */
  families?: readonly IPFamily[];
}

/** What recordSync needs besides the report. */
export interface RecordSyncContext {
  /** The states the sync programmed, one per family: for the no-local-endpoints gauge. */
  states?: readonly ProxyState[];
  /** Date.now() when the sync ended (default now). */
  now?: number;
}

/** A SyncResult that says whether deleting stale chains failed (FamilySync logs it). */
type SyncResultWithCleanup = SyncResult & { cleanupFailed?: boolean };

export class ProxyMetrics {
  readonly registry = new Registry();
  /** The families the proxy programs. */
  readonly families: readonly IPFamily[];

  readonly syncDuration: Histogram<'ip_family'>;
  readonly syncFullDuration: Histogram<'ip_family'>;
  readonly syncPartialDuration: Histogram<'ip_family'>;
  readonly lastSyncTimestamp: Gauge<'ip_family'>;
  readonly lastQueuedTimestamp: Gauge<'ip_family'>;
  readonly localhostListeners: Gauge<'ip_family'>;
  readonly localhostListenerFailures: Counter<'ip_family'>;
  readonly localhostRejected: Counter<'protocol'>;
  readonly networkProgrammingDuration: Histogram<'ip_family'>;
  readonly endpointChangesPending: Gauge;
  readonly endpointChangesTotal: Counter;
  readonly serviceChangesPending: Gauge;
  readonly serviceChangesTotal: Counter;
  readonly noLocalEndpoints: Gauge<'ip_family' | 'traffic_policy'>;
  readonly nftablesSyncFailures: Counter<'ip_family'>;
  readonly nftablesCleanupFailures: Counter<'ip_family'>;
  readonly healthzTotal: Counter<'code'>;
  readonly livezTotal: Counter<'code'>;
  readonly externalChanges: Counter<'ip_family' | 'kind'>;
  readonly repairs: Counter<'ip_family'>;
  readonly repairDuration: Histogram<'ip_family'>;

  constructor(opts: ProxyMetricsOptions = {}) {
    this.families = opts.families ?? ['ipv4', 'ipv6'];
    const registers = [this.registry];
    const histogram = (name: string, help: string, buckets: number[]): Histogram<'ip_family'> =>
      new Histogram({ name, help, buckets, labelNames: ['ip_family'], registers });

    this.syncDuration = histogram('kubeproxy_sync_proxy_rules_duration_seconds', 'SyncProxyRules latency in seconds', SYNC_DURATION_BUCKETS);
    this.syncFullDuration = histogram('kubeproxy_sync_full_proxy_rules_duration_seconds', 'SyncProxyRules latency in seconds for full resyncs', SYNC_DURATION_BUCKETS);
    this.syncPartialDuration = histogram(
      'kubeproxy_sync_partial_proxy_rules_duration_seconds',
      'SyncProxyRules latency in seconds for partial resyncs',
      SYNC_DURATION_BUCKETS,
    );
    this.lastSyncTimestamp = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
      help: 'The last time proxy rules were successfully synced',
      labelNames: ['ip_family'],
      registers,
    });
    this.lastQueuedTimestamp = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
      help: 'The last time a sync of proxy rules was queued',
      labelNames: ['ip_family'],
      registers,
    });
    this.networkProgrammingDuration = histogram(
      'kubeproxy_network_programming_duration_seconds',
      'In Cluster Network Programming Latency in seconds',
      NETWORK_PROGRAMMING_BUCKETS,
    );

    const pending = opts.pending;
    this.endpointChangesPending = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_endpoint_changes_pending',
      help: 'Pending proxy rules Endpoint changes',
      registers,
      ...(pending ? { collect(this: Gauge) { this.set(pending().endpoints); } } : {}),
    });
    this.serviceChangesPending = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_service_changes_pending',
      help: 'Pending proxy rules Service changes',
      registers,
      ...(pending ? { collect(this: Gauge) { this.set(pending().services); } } : {}),
    });
    this.endpointChangesTotal = this.cumulative('kubeproxy_sync_proxy_rules_endpoint_changes_total', 'Cumulative proxy rules Endpoint changes', opts.changeTotals, 'endpoints');
    this.serviceChangesTotal = this.cumulative('kubeproxy_sync_proxy_rules_service_changes_total', 'Cumulative proxy rules Service changes', opts.changeTotals, 'services');

    this.noLocalEndpoints = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
      help: 'Number of services with a Local traffic policy and no endpoints',
      labelNames: ['ip_family', 'traffic_policy'],
      registers,
    });
    this.nftablesSyncFailures = new Counter({
      name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
      help: 'Cumulative proxy nftables sync failures',
      labelNames: ['ip_family'],
      registers,
    });
    this.nftablesCleanupFailures = new Counter({
      name: 'kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total',
      help: 'Cumulative proxy nftables cleanup failures',
      labelNames: ['ip_family'],
      registers,
    });
    // The localhost NodePort proxy (kube-proxy's KubeProxyNFTablesLocalhostNodePorts metrics).
    const metrics = this;
    this.localhostListeners = new Gauge({
      name: 'kubeproxy_nftables_localhost_nodeport_listeners',
      help: 'Number of localhost NodePort listeners the proxy serves',
      labelNames: ['ip_family'],
      registers,
      collect(this: Gauge<'ip_family'>) {
        for (const family of metrics.families) this.set({ ip_family: FAMILY_LABEL[family] }, metrics.localhostCount?.count(family) ?? 0);
      },
    });
    this.localhostListenerFailures = new Counter({
      name: 'kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total',
      help: 'Cumulative localhost NodePort listeners that could not be created',
      labelNames: ['ip_family'],
      registers,
    });
    const seenRejected = { udp: 0, sctp: 0 };
    this.localhostRejected = new Counter({
      name: 'kubeproxy_nftables_localhost_nodeport_rejected_packets_total',
      help: 'Cumulative packets to localhost NodePorts rejected because their protocol is not TCP',
      labelNames: ['protocol'],
      registers,
      async collect(this: Counter<'protocol'>) {
        if (!metrics.readRejected) return;
        const counts = await metrics.readRejected().catch(() => undefined);
        if (!counts) return;
        for (const protocol of ['udp', 'sctp'] as const) {
          // The kernel's counter is absolute; it restarts from 0 if the rule is recreated.
          const now = counts[protocol];
          if (now > seenRejected[protocol]) this.inc({ protocol }, now - seenRejected[protocol]);
          seenRejected[protocol] = now;
        }
      },
    });
    for (const protocol of ['udp', 'sctp']) this.localhostRejected.inc({ protocol }, 0);
    this.healthzTotal = new Counter({ name: 'kubeproxy_proxy_healthz_total', help: 'Cumulative proxy healthz HTTP status', labelNames: ['code'], registers });
    this.livezTotal = new Counter({ name: 'kubeproxy_proxy_livez_total', help: 'Cumulative proxy livez HTTP status', labelNames: ['code'], registers });
    // nftlink's own: changes to its tables that another process made, and their repair.
    this.externalChanges = new Counter({
      name: 'nftlink_external_changes_total',
      help: 'Transactions of other processes that changed the proxy tables, by kind of object changed (lost: monitor events were lost)',
      labelNames: ['ip_family', 'kind'],
      registers,
    });
    this.repairs = new Counter({ name: 'nftlink_repairs_total', help: 'Syncs that repaired an outside change to the proxy tables', labelNames: ['ip_family'], registers });
    this.repairDuration = histogram('nftlink_repair_duration_seconds', 'From an outside change to the proxy tables being seen to its repair committed, in seconds', SYNC_DURATION_BUCKETS);

    // Zero-valued series from the start, as kube-proxy's vectors get them at its first sync, so
    // rate() and absent() work before the first failure.
    for (const family of this.families) {
      const ip_family = FAMILY_LABEL[family];
      this.nftablesSyncFailures.inc({ ip_family }, 0);
      this.nftablesCleanupFailures.inc({ ip_family }, 0);
      this.repairs.inc({ ip_family }, 0);
      for (const traffic_policy of ['internal', 'external']) this.noLocalEndpoints.set({ ip_family, traffic_policy }, 0);
    }
  }

  /** A counter that follows a cumulative count read at scrape time (it only ever grows). */
  private cumulative(name: string, help: string, totals: (() => ChangeTotals) | undefined, field: keyof ChangeTotals): Counter {
    let seen = 0;
    return new Counter({
      name,
      help,
      registers: [this.registry],
      ...(totals
        ? {
            collect(this: Counter) {
              const now = totals()[field];
              if (now > seen) this.inc(now - seen);
              seen = Math.max(seen, now);
            },
          }
        : {}),
    });
  }

  /** Another process changed a proxy table (kind: the object kind, or `lost`). */
  externalChange(family: 'ip' | 'ip6', kind: string): void {
    this.externalChanges.inc({ ip_family: NFT_FAMILY_LABEL[family]!, kind });
  }

  /** A sync repaired an outside change, this long after it was seen. */
  repaired(family: 'ip' | 'ip6', seconds: number): void {
    const ip_family = NFT_FAMILY_LABEL[family]!;
    this.repairs.inc({ ip_family });
    this.repairDuration.observe({ ip_family }, seconds);
  }

  /** A change was queued for sync (kube-proxy sets this on every Service/EndpointSlice event). */
  changeQueued(now: number = Date.now()): void {
    for (const family of this.families) this.lastQueuedTimestamp.set({ ip_family: FAMILY_LABEL[family] }, now / 1000);
  }

  /** A /healthz or /livez answer (HealthzServerOptions.onProbe). */
  probe(path: '/healthz' | '/livez', code: number): void {
    (path === '/healthz' ? this.healthzTotal : this.livezTotal).inc({ code: String(code) });
  }

  /** Deleting stale chains failed in `family` (kube-proxy's cleanup failure). */
  cleanupFailed(family: IPFamily): void {
    this.nftablesCleanupFailures.inc({ ip_family: FAMILY_LABEL[family] });
  }

  /** Keeps kubeproxy_nftables_localhost_nodeport_listeners current (read at scrape time). */
  watchLocalhost(proxy: { count(family: IPFamily): number }): void {
    this.localhostCount = proxy;
  }
  private localhostCount: { count(family: IPFamily): number } | undefined;

  /** A localhost NodePort listener could not be opened. */
  localhostListenerFailed(family: IPFamily): void {
    this.localhostListenerFailures.inc({ ip_family: FAMILY_LABEL[family] });
  }

  /** The rejected-packet counters of the ruleset (absolute kernel counts, per protocol). */
  localhostRejectedCounts(read: () => Promise<Record<'udp' | 'sctp', number>>): void {
    this.readRejected = read;
  }
  private readRejected: (() => Promise<Record<'udp' | 'sctp', number>>) | undefined;

  /** The text exposition of every metric, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * Updates the metrics from one sync: durations and the last-sync time of every family that synced,
 * a failure for every family that did not (the Proxier leaves a failed family's result out), the
 * network programming latency of the EndpointSlice changes it programmed, and the Local-policy
 * services without local endpoints.
 */
export function recordSync(report: SyncReport, metrics: ProxyMetrics, context: RecordSyncContext = {}): void {
  const now = context.now ?? Date.now();
  const synced = new Set<IPFamilyLabel>();
  for (const r of report.results as SyncResultWithCleanup[]) {
    const ip_family = NFT_FAMILY_LABEL[r.family];
    if (!ip_family) continue;
    synced.add(ip_family);
    const seconds = r.durationMs / 1000;
    metrics.syncDuration.observe({ ip_family }, seconds);
    (r.full ? metrics.syncFullDuration : metrics.syncPartialDuration).observe({ ip_family }, seconds);
    metrics.lastSyncTimestamp.set({ ip_family }, now / 1000);
    if (r.cleanupFailed) metrics.nftablesCleanupFailures.inc({ ip_family });
    // kube-proxy observes each trigger time once per family proxier that programmed it. The
    // report's trigger times are not split by family, so with both families each is seen twice.
    for (const t of report.lastChangeTriggerTimes) metrics.networkProgrammingDuration.observe({ ip_family }, (now - t) / 1000);
  }
  if (report.error) {
    for (const family of metrics.families) {
      const ip_family = FAMILY_LABEL[family];
      if (!synced.has(ip_family)) metrics.nftablesSyncFailures.inc({ ip_family });
    }
  }
  for (const state of context.states ?? []) {
    const counts = noLocalEndpointCounts(state);
    const ip_family = FAMILY_LABEL[state.family];
    metrics.noLocalEndpoints.set({ ip_family, traffic_policy: 'internal' }, counts.internal);
    metrics.noLocalEndpoints.set({ ip_family, traffic_policy: 'external' }, counts.external);
  }
}

/**
 * Service ports whose Local policy finds no local endpoint, as kube-proxy's nftables proxier counts
 * them while writing rules: "internal" for internalTrafficPolicy Local, "external" for
 * externalTrafficPolicy Local on externally reachable ports.
 */
export function noLocalEndpointCounts(state: ProxyState): { internal: number; external: number } {
  let internal = 0;
  let external = 0;
  for (const sp of localPolicyPorts(state)) {
    const internalLocal = sp.internalTrafficPolicy === 'Local';
    const externalLocal = sp.external && sp.externalTrafficPolicy === 'Local';
    if (!internalLocal && !externalLocal) continue;
    const { localEndpoints } = categorizeEndpoints(state.endpoints.get(sp.id) ?? [], sp);
    if (localEndpoints.length > 0) continue;
    if (internalLocal) internal++;
    if (externalLocal) external++;
  }
  return { internal, external };
}
