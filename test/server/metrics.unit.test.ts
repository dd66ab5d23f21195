import { afterEach, describe, expect, it } from 'vitest';
import { MetricsServer } from '../../src/server/metrics-server.js';
import { ProxyMetrics, recordSync } from '../../src/server/metrics.js';
import type { SyncReport } from '../../src/proxy/proxier.js';
import type { ProxyState, ServicePort } from '../../src/proxy/model/types.js';

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const NOW = 1_700_000_000_000;

function result(family: 'ip' | 'ip6', full: boolean, durationMs: number) {
  return { family, full, operations: 10, chainsWritten: 2, chainsFlushed: 0, chainsDeleted: 0, elementsChanged: 3, excluded: 0, durationMs, commitMs: durationMs / 2 };
}

function localService(name: string, itp: 'Local' | 'Cluster', etp: 'Local' | 'Cluster'): ServicePort {
  return {
    id: `ns/${name}:`, namespace: 'ns', name, portName: '', protocol: 'TCP', family: 'ipv4', clusterIP: '198.18.96.1', port: 80, nodePort: 30080,
    externalIPs: [], loadBalancerIPs: [], loadBalancerSourceRanges: [], externalTrafficPolicy: etp, internalTrafficPolicy: itp,
    affinityTimeoutSeconds: 0, healthCheckNodePort: 0, external: true,
  };
}

/** Parses the exposition into name{labels} -> value, and name -> type. */
function parseExposition(text: string): { values: Map<string, number>; types: Map<string, string>; help: Map<string, string> } {
  const values = new Map<string, number>();
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    let m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m) types.set(m[1]!, m[2]!);
    m = /^# HELP (\S+) (.*)$/.exec(line);
    if (m) help.set(m[1]!, m[2]!);
    m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return { values, types, help };
}

describe('metrics', () => {
  it('serves kube-proxy-named metrics over HTTP, fed from a SyncReport', async () => {
    let pending = { services: 3, endpoints: 5, oldestQueuedAt: undefined as number | undefined };
    let totals = { services: 7, endpoints: 11 };
    const metrics = new ProxyMetrics({ pending: () => pending, changeTotals: () => totals });
    server = new MetricsServer({ address: '127.0.0.1:0', metrics, configz: () => ({ mode: 'nftables' }) });
    const { port } = await server.start();
    const base = `http://127.0.0.1:${port}`;

    const state: ProxyState = {
      family: 'ipv4',
      services: new Map([
        ['ns/a:', localService('a', 'Local', 'Cluster')],
        ['ns/b:', localService('b', 'Cluster', 'Local')],
        ['ns/c:', localService('c', 'Local', 'Local')],
      ]),
      endpoints: new Map([
        ['ns/a:', []],
        ['ns/b:', [{ ip: '198.18.0.1', port: 80, ready: true, serving: true, terminating: false, isLocal: false }]],
        ['ns/c:', [{ ip: '198.18.0.2', port: 80, ready: true, serving: true, terminating: false, isLocal: true }]],
      ]),
    };
    // IPv4 synced (a full sync of 12 ms); IPv6 failed and is missing from the results.
    const report: SyncReport = {
      results: [result('ip', true, 12)],
      states: [state],
      error: new Error('EBUSY'),
      queuedSince: NOW - 2_000,
      lastChangeTriggerTimes: [NOW - 1_500, NOW - 30_000],
      invalid: [],
    };
    recordSync(report, metrics, { states: [state], now: NOW });
    recordSync({ results: [result('ip', false, 3), result('ip6', false, 4)], states: [], queuedSince: undefined, lastChangeTriggerTimes: [], invalid: [] }, metrics, { now: NOW + 1000 });
    metrics.changeQueued(NOW + 500);

    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const { values, types, help } = parseExposition(await res.text());

    expect(types.get('kubeproxy_sync_proxy_rules_duration_seconds')).toBe('histogram');
    expect(types.get('kubeproxy_sync_full_proxy_rules_duration_seconds')).toBe('histogram');
    expect(types.get('kubeproxy_sync_partial_proxy_rules_duration_seconds')).toBe('histogram');
    expect(types.get('kubeproxy_network_programming_duration_seconds')).toBe('histogram');
    expect(types.get('kubeproxy_sync_proxy_rules_last_timestamp_seconds')).toBe('gauge');
    expect(types.get('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds')).toBe('gauge');
    expect(types.get('kubeproxy_sync_proxy_rules_endpoint_changes_pending')).toBe('gauge');
    expect(types.get('kubeproxy_sync_proxy_rules_service_changes_pending')).toBe('gauge');
    expect(types.get('kubeproxy_sync_proxy_rules_endpoint_changes_total')).toBe('counter');
    expect(types.get('kubeproxy_sync_proxy_rules_service_changes_total')).toBe('counter');
    expect(types.get('kubeproxy_sync_proxy_rules_no_local_endpoints_total')).toBe('gauge');
    expect(types.get('kubeproxy_sync_proxy_rules_nftables_sync_failures_total')).toBe('counter');
    expect(types.get('kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total')).toBe('counter');
    expect(help.get('kubeproxy_sync_proxy_rules_duration_seconds')).toBe('SyncProxyRules latency in seconds');
    expect(help.get('kubeproxy_network_programming_duration_seconds')).toBe('In Cluster Network Programming Latency in seconds');

    expect(values.get('kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"}')).toBe(2);
    expect(values.get('kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"}')).toBeCloseTo(0.015);
    expect(values.get('kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.016",ip_family="IPv4"}')).toBe(2);
    expect(values.get('kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.008",ip_family="IPv4"}')).toBe(1);
    expect(values.get('kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family="IPv4"}')).toBe(1);
    expect(values.get('kubeproxy_sync_partial_proxy_rules_duration_seconds_count{ip_family="IPv6"}')).toBe(1);
    expect(values.get('kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}')).toBe((NOW + 1000) / 1000);
    expect(values.get('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"}')).toBe((NOW + 500) / 1000);
    expect(values.get('kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"}')).toBe(2);
    expect(values.get('kubeproxy_network_programming_duration_seconds_bucket{le="2",ip_family="IPv4"}')).toBe(1);
    expect(values.get('kubeproxy_network_programming_duration_seconds_bucket{le="30",ip_family="IPv4"}')).toBe(2);
    expect(values.get('kubeproxy_network_programming_duration_seconds_bucket{le="300",ip_family="IPv4"}')).toBe(2);
    expect(values.get('kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv6"}')).toBe(1);
    expect(values.get('kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"}')).toBe(0);
    expect(values.get('kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family="IPv4"}')).toBe(0);
    expect(values.get('kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="internal"}')).toBe(1);
    expect(values.get('kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="external"}')).toBe(1);
    expect(values.get('kubeproxy_sync_proxy_rules_service_changes_pending')).toBe(3);
    expect(values.get('kubeproxy_sync_proxy_rules_endpoint_changes_pending')).toBe(5);
    expect(values.get('kubeproxy_sync_proxy_rules_service_changes_total')).toBe(7);
    expect(values.get('kubeproxy_sync_proxy_rules_endpoint_changes_total')).toBe(11);

    // Scrape-time values follow the tracker.
    pending = { services: 0, endpoints: 0, oldestQueuedAt: undefined };
    totals = { services: 9, endpoints: 11 };
    const again = parseExposition(await (await fetch(`${base}/metrics`)).text()).values;
    expect(again.get('kubeproxy_sync_proxy_rules_service_changes_pending')).toBe(0);
    expect(again.get('kubeproxy_sync_proxy_rules_service_changes_total')).toBe(9);

    expect(await (await fetch(`${base}/proxyMode`)).text()).toBe('nftables');
    expect(await (await fetch(`${base}/configz`)).json()).toEqual({ 'kubeproxy.config.k8s.io': { mode: 'nftables' } });
    const healthz = await fetch(`${base}/healthz`);
    expect([healthz.status, await healthz.text()]).toEqual([200, 'ok']);
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });
});
