import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { healthCheckEntries, ServiceHealthServers } from '../../src/server/service-health.js';
import type { ProxyState, ServicePort } from '../../src/proxy/model/types.js';

let servers: ServiceHealthServers | undefined;
afterEach(async () => {
  await servers?.stop();
  servers = undefined;
});

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function probe(port: number): Promise<{ status: number; body: unknown; weight: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}/`);
  return { status: res.status, body: await res.json(), weight: res.headers.get('x-load-balancing-endpoint-weight') };
}

describe('service health-check servers', () => {
  it('answers 200 with local endpoints, 503 without, and reconciles listeners', async () => {
    let proxyHealthy = true;
    servers = new ServiceHealthServers({ addresses: ['127.0.0.1'], proxyHealthy: () => proxyHealthy });
    const [a, b] = [await freePort(), await freePort()];
    expect(await servers.reconcile([
      { namespace: 'ns', name: 'web', port: a, localEndpoints: 2 },
      { namespace: 'ns', name: 'db', port: b, localEndpoints: 0 },
    ])).toEqual([]);
    expect(await probe(a)).toEqual({ status: 200, body: { service: { namespace: 'ns', name: 'web' }, localEndpoints: 2, serviceProxyHealthy: true }, weight: '2' });
    expect((await probe(b)).status).toBe(503);

    proxyHealthy = false;
    expect(await probe(a)).toMatchObject({ status: 503, body: { serviceProxyHealthy: false } });
    proxyHealthy = true;

    // Counts change in place; a removed service's port is closed.
    await servers.reconcile([{ namespace: 'ns', name: 'db', port: b, localEndpoints: 1 }]);
    expect(servers.ports).toEqual([b]);
    expect(await probe(b)).toMatchObject({ status: 200, body: { localEndpoints: 1 } });
    await expect(fetch(`http://127.0.0.1:${a}/`)).rejects.toThrow();
  });

  it('reports a port it cannot open and tries again next time', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    servers = new ServiceHealthServers({ addresses: ['127.0.0.1'] });
    const failures = await servers.reconcile([{ namespace: 'ns', name: 'web', port, localEndpoints: 1 }]);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).toMatch(/health check port of service ns\/web: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    await new Promise<void>((r) => blocker.close(() => r()));
    expect(await servers.reconcile([{ namespace: 'ns', name: 'web', port, localEndpoints: 1 }])).toEqual([]);
    expect((await probe(port)).status).toBe(200);
  });

  it('counts ready local endpoints by IP per service from the proxy state', () => {
    const sp = (portName: string, port: number): ServicePort => ({
      id: `ns/lb:${portName}`, namespace: 'ns', name: 'lb', portName, protocol: 'TCP', family: 'ipv4', clusterIP: '198.18.96.10', port,
      nodePort: 30000 + port, externalIPs: [], loadBalancerIPs: ['198.19.3.4'], loadBalancerSourceRanges: [], externalTrafficPolicy: 'Local',
      internalTrafficPolicy: 'Cluster', affinityTimeoutSeconds: 0, healthCheckNodePort: 32000, external: true,
    });
    const ep = (ip: string, isLocal: boolean, ready = true) => ({ ip, port: 8080, ready, serving: ready, terminating: !ready, isLocal });
    const state: ProxyState = {
      family: 'ipv4',
      services: new Map([['ns/lb:http', sp('http', 80)], ['ns/lb:https', sp('https', 443)]]),
      endpoints: new Map([
        ['ns/lb:http', [ep('198.18.0.1', true), ep('198.18.0.2', false), ep('198.18.0.3', true, false)]],
        ['ns/lb:https', [ep('198.18.0.1', true), ep('198.18.0.4', true)]],
      ]),
    };
    expect(healthCheckEntries([state])).toEqual([{ namespace: 'ns', name: 'lb', port: 32000, localEndpoints: 2 }]);
  });
});
