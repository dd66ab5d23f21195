// Health-check NodePorts of externalTrafficPolicy: Local load balancers, as kube-proxy serves them
// (pkg/proxy/healthcheck/service_health.go). The cloud load balancer probes
// http://<node>:<healthCheckNodePort>/ on every node and sends traffic only to the nodes that answer
// 200, i.e. those with a ready local endpoint, which is what keeps the client source IP without an
// extra hop. Each port gets its own HTTP listener; any path answers:
//
//   200 / 503  {"service":{"namespace":"ns","name":"svc"},"localEndpoints":N,"serviceProxyHealthy":true}
//
// 200 needs N > 0 and the proxy itself healthy (kube-proxy also checks the latter, so a stuck proxy
// is drained). X-Load-Balancing-Endpoint-Weight carries N, as kube-proxy sends it.

import type { Server } from 'node:http';
import { localPolicyPorts } from '../proxy/model/port-index.js';
import type { ProxyState } from '../proxy/model/types.js';
import { close, formatBindAddress, listen } from './bind-address.js';
import { http } from '../on-demand.js';

export interface ServiceHealthEntry {
  namespace: string;
  name: string;
  /** The Service's spec.healthCheckNodePort. */
  port: number;
  /** Ready endpoints of the service on this node. */
  localEndpoints: number;
}

export interface ServiceHealthFailure {
  namespace: string;
  name: string;
  port: number;
  reason: string;
}

export interface ServiceHealthServersOptions {
  /**
   * Host addresses to listen on ('' = every address, the default). kube-proxy listens on the
   * nodePortAddresses; the caller resolves those to IPs.
   */
  addresses?: string[];
  /** Whether the proxy itself is healthy (healthz.ts isProxyHealthy); default always. */
  proxyHealthy?: () => boolean;
}

interface Listener {
  namespace: string;
  name: string;
  localEndpoints: number;
  servers: Server[];
}

/**
 * Ready local endpoints per service with a health-check NodePort, from the proxy's states (one per
 * family). As kube-proxy's LocalReadyEndpoints(), endpoints are counted by IP per service (a pod
 * serving ports 80 and 443 is one endpoint), and only ready ones: a node left with terminating
 * endpoints alone fails the check, so the load balancer moves away while they drain.
 */
export function healthCheckEntries(states: readonly ProxyState[]): ServiceHealthEntry[] {
  const byService = new Map<string, { namespace: string; name: string; port: number; ips: Set<string> }>();
  for (const state of states) {
    for (const sp of localPolicyPorts(state)) {
      if (sp.healthCheckNodePort === 0 || sp.externalTrafficPolicy !== 'Local') continue;
      const key = `${sp.namespace}/${sp.name}`;
      let entry = byService.get(key);
      if (!entry) {
        entry = { namespace: sp.namespace, name: sp.name, port: sp.healthCheckNodePort, ips: new Set() };
        byService.set(key, entry);
      }
      for (const ep of state.endpoints.get(sp.id) ?? []) if (ep.isLocal && ep.ready) entry.ips.add(ep.ip);
    }
  }
  return [...byService.values()].map((e) => ({ namespace: e.namespace, name: e.name, port: e.port, localEndpoints: e.ips.size }));
}

export class ServiceHealthServers {
  private readonly listeners = new Map<number, Listener>();
  private readonly addresses: string[];
  private readonly proxyHealthy: () => boolean;
  private reconciling: Promise<unknown> = Promise.resolve();

  constructor(opts: ServiceHealthServersOptions = {}) {
    this.addresses = opts.addresses?.length ? opts.addresses : [''];
    this.proxyHealthy = opts.proxyHealthy ?? (() => true);
  }

  /** The ports listened on now. */
  get ports(): number[] {
    return [...this.listeners.keys()].sort((a, b) => a - b);
  }

  /**
   * Makes the listeners match `entries`: opens new ports, closes removed ones, updates the
   * counts of the others in place (no reconnect for the load balancer). A port that cannot be
   * opened is reported and tried again by the next reconcile (kube-proxy retries each sync).
   */
  reconcile(entries: readonly ServiceHealthEntry[]): Promise<ServiceHealthFailure[]> {
    const run = this.reconciling.then(() => this.reconcileNow(entries));
    this.reconciling = run.catch(() => undefined);
    return run;
  }

  private async reconcileNow(entries: readonly ServiceHealthEntry[]): Promise<ServiceHealthFailure[]> {
    const failures: ServiceHealthFailure[] = [];
    const wanted = new Map<number, ServiceHealthEntry>();
    for (const e of entries) {
      const other = wanted.get(e.port);
      if (other && (other.namespace !== e.namespace || other.name !== e.name)) {
        failures.push({ ...e, reason: `healthCheckNodePort ${e.port} is already used by service ${other.namespace}/${other.name}` });
        continue;
      }
      wanted.set(e.port, e);
    }
    for (const [port, l] of this.listeners) {
      const e = wanted.get(port);
      if (e && e.namespace === l.namespace && e.name === l.name) continue;
      this.listeners.delete(port);
      await Promise.all(l.servers.map(close));
    }
    for (const [port, e] of wanted) {
      const existing = this.listeners.get(port);
      if (existing) {
        existing.localEndpoints = e.localEndpoints;
        continue;
      }
      const listener: Listener = { namespace: e.namespace, name: e.name, localEndpoints: e.localEndpoints, servers: [] };
      try {
        for (const host of this.addresses) {
          const server = this.serverFor(listener);
          listener.servers.push(server);
          await listen(server, { host, port }, `health check port of service ${e.namespace}/${e.name}`);
        }
        this.listeners.set(port, listener);
      } catch (err) {
        await Promise.all(listener.servers.map(close));
        failures.push({ namespace: e.namespace, name: e.name, port, reason: (err as Error).message });
      }
    }
    return failures;
  }

  private serverFor(listener: Listener): Server {
    return http().createServer((_req, res) => {
      const count = listener.localEndpoints;
      const proxyHealthy = this.proxyHealthy();
      const body = JSON.stringify({ service: { namespace: listener.namespace, name: listener.name }, localEndpoints: count, serviceProxyHealthy: proxyHealthy });
      res
        .writeHead(count > 0 && proxyHealthy ? 200 : 503, {
          'Content-Type': 'application/json',
          'X-Content-Type-Options': 'nosniff',
          'X-Load-Balancing-Endpoint-Weight': String(count),
        })
        .end(body);
    });
  }

  /** Closes every listener. */
  async stop(): Promise<void> {
    await this.reconcile([]);
  }

  /** For logs: where a port is served. */
  describe(port: number): string[] {
    return this.addresses.map((host) => formatBindAddress({ host, port }));
  }
}
