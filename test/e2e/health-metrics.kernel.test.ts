// /healthz, /livez and /metrics of a running `nftlink proxy` (informers, fake API server), scraped
// over real HTTP: the health server from the client namespace (as a load balancer or kubelet would
// reach 0.0.0.0:10256), the metrics server on the node's loopback (127.0.0.1:10249). And the
// health-check NodePort of a LoadBalancer Service with externalTrafficPolicy: Local.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, type Cluster } from '../../src/netns/cluster.js';
import { CLUSTER, service, slice, startCluster } from '../proxy/dataplane/helpers.js';
import { ApiServer, httpGet, ProxyFiles, ProxyProcess, sample, scrapeMetrics, until, NODE, tearDown } from './harness.js';

const HC_PORT = 32100;
const NODE_PORT = 30180;

let c: Cluster;
let files: ProxyFiles;
let api: ApiServer;
let proxy: ProxyProcess;
const detail = (): string => proxy.raw.split('\n').slice(-20).join('\n');
const health = (path: string) => httpGet(c.client, `http://${CLUSTER.nodeIPv4}:10256${path}`);
const hc = () => httpGet(c.client, `http://${CLUSTER.nodeIPv4}:${HC_PORT}/`);

function lbService() {
  const s = service({
    name: 'lb',
    type: 'LoadBalancer',
    clusterIPs: ['198.18.200.30'],
    ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: NODE_PORT }],
    externalTrafficPolicy: 'Local',
    loadBalancerIPs: ['198.18.250.1'],
  });
  s.spec!.healthCheckNodePort = HC_PORT;
  return s;
}

beforeAll(async () => {
  c = await startCluster(1, 'nle2eh');
  files = new ProxyFiles();
  api = await ApiServer.start(c.node);
  await api.upsert('nodes', NODE);
  await api.upsert('services', lbService());
  await api.upsert('endpointslices', slice({ service: 'lb', endpoints: [{ ip: c.pods[0]!.ipv4, nodeName: 'node' }] }));
  proxy = ProxyProcess.start(c.node, ['--config', files.config({ syncPeriod: '30s' }), '--node-ip', CLUSTER.nodeIPv4, '--service-cidr', CLUSTER.serviceCIDRv4]);
  await until('the health-check NodePort', () => hc().status === 200, 15_000, detail);
}, 60_000);

afterAll(async () => {
  await tearDown({ proxy, api, cluster: c, files });
});

describe('health and metrics servers', () => {
  it('/healthz and /livez answer 200 with kube-proxy JSON; the metrics port has /healthz, /proxyMode, /configz', () => {
    for (const path of ['/healthz', '/livez']) {
      const a = health(path);
      expect(a.status).toBe(200);
      expect(a.headers['content-type']).toBe('application/json');
      const body = JSON.parse(a.body) as Record<string, unknown>;
      expect(Date.parse(String(body.lastUpdated))).toBeGreaterThan(Date.now() - 60_000);
      expect(Date.parse(String(body.currentTime))).toBeGreaterThan(Date.now() - 60_000);
      if (path === '/healthz') expect(body.nodeEligible).toBe(true);
      else expect(body).not.toHaveProperty('nodeEligible');
    }
    expect(health('/other').status).toBe(404);
    expect(httpGet(c.node, 'http://127.0.0.1:10249/healthz').body).toBe('ok');
    expect(httpGet(c.node, 'http://127.0.0.1:10249/proxyMode').body).toBe('nftables');
    const configz = JSON.parse(httpGet(c.node, 'http://127.0.0.1:10249/configz').body) as Record<string, { mode: string; nftables: { syncPeriod: string } }>;
    expect(configz['kubeproxy.config.k8s.io']!.mode).toBe('nftables');
    expect(configz['kubeproxy.config.k8s.io']!.nftables.syncPeriod).toBe('30s');
    // The metrics server is on the node's loopback only, as kube-proxy's default.
    expect(httpGet(c.client, `http://${CLUSTER.nodeIPv4}:10249/metrics`, 500).status).toBe(0);
  });

  it('/metrics has kube-proxy\'s metric names and types', () => {
    const m = scrapeMetrics(c.node);
    const types = new Map([...m.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => [x[1]!, x[2]!]));
    const expected: Record<string, string> = {
      kubeproxy_sync_proxy_rules_duration_seconds: 'histogram',
      kubeproxy_sync_full_proxy_rules_duration_seconds: 'histogram',
      kubeproxy_sync_partial_proxy_rules_duration_seconds: 'histogram',
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: 'gauge',
      kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds: 'gauge',
      kubeproxy_network_programming_duration_seconds: 'histogram',
      kubeproxy_sync_proxy_rules_endpoint_changes_pending: 'gauge',
      kubeproxy_sync_proxy_rules_endpoint_changes_total: 'counter',
      kubeproxy_sync_proxy_rules_service_changes_pending: 'gauge',
      kubeproxy_sync_proxy_rules_service_changes_total: 'counter',
      kubeproxy_sync_proxy_rules_no_local_endpoints_total: 'gauge',
      kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 'counter',
      kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total: 'counter',
      kubeproxy_proxy_healthz_total: 'counter',
      kubeproxy_proxy_livez_total: 'counter',
    };
    for (const [name, type] of Object.entries(expected)) expect({ name, type: types.get(name) }).toEqual({ name, type });
    expect(sample(m, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(sample(m, 'kubeproxy_sync_proxy_rules_service_changes_total')).toBeGreaterThanOrEqual(1);
    expect(sample(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_total')).toBeGreaterThanOrEqual(1);
    expect(sample(m, 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"}')).toBe(0);
    expect(sample(m, 'kubeproxy_proxy_healthz_total{code="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(m, 'kubeproxy_proxy_livez_total{code="200"}')).toBeGreaterThanOrEqual(1);
  });

  it('the health-check NodePort answers 200 with a local endpoint and 503 without; traffic follows', async () => {
    let a = hc();
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ service: { namespace: 'default', name: 'lb' }, localEndpoints: 1, serviceProxyHealthy: true });
    expect(a.headers['x-load-balancing-endpoint-weight']).toBe('1');
    expect(probe(c.client, CLUSTER.nodeIPv4, NODE_PORT, { count: 3 }).answers).toEqual([c.pods[0]!.name, c.pods[0]!.name, c.pods[0]!.name]);

    // The endpoint moves to another node: no local endpoint left.
    await api.upsert('endpointslices', slice({ service: 'lb', endpoints: [{ ip: c.pods[0]!.ipv4, nodeName: 'other-node' }] }));
    await until('503 on the health-check port', () => hc().status === 503, 10_000, detail);
    a = hc();
    expect(JSON.parse(a.body)).toMatchObject({ localEndpoints: 0, serviceProxyHealthy: true });
    expect(a.headers['x-load-balancing-endpoint-weight']).toBe('0');
    // externalTrafficPolicy Local without local endpoints: NodePort traffic is dropped here.
    expect(probe(c.client, CLUSTER.nodeIPv4, NODE_PORT, { count: 1, timeoutMs: 500 }).answers[0]).toMatch(/^error:/);
    const m = scrapeMetrics(c.node);
    expect(sample(m, 'kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="external"}')).toBe(1);

    await api.upsert('endpointslices', slice({ service: 'lb', endpoints: [{ ip: c.pods[0]!.ipv4, nodeName: 'node' }] }));
    await until('200 again', () => hc().status === 200, 10_000, detail);
  });

  it('a Node being deleted makes /healthz 503 (nodeEligible false) while /livez stays 200', async () => {
    await api.upsert('nodes', { ...NODE, spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] } });
    await until('/healthz 503', () => health('/healthz').status === 503, 10_000, detail);
    expect(JSON.parse(health('/healthz').body)).toMatchObject({ nodeEligible: false });
    expect(health('/livez').status).toBe(200);
    expect(sample(scrapeMetrics(c.node), 'kubeproxy_proxy_healthz_total{code="503"}')).toBeGreaterThanOrEqual(1);
    await api.upsert('nodes', NODE);
    await until('/healthz 200 again', () => health('/healthz').status === 200, 10_000, detail);
  });
});
