// The proxy's HTTP servers: /healthz and /livez, and /metrics (with /configz). As kube-proxy: a
// server that cannot bind is logged and retried while the proxy keeps programming, unless
// bindAddressHardFail (--bind-address-hard-fail), which ends the proxy.

import type { Logger } from '../logging/logger.js';
import { writeConfig, type KubeProxyConfig } from '../config/kube-proxy-config.js';
import { HealthzServer, type SyncHealthTracker } from '../server/healthz.js';
import type { ProxyMetrics } from '../server/metrics.js';
import { MetricsServer } from '../server/metrics-server.js';
import { yaml } from '../on-demand.js';

const RETRY_SERVER_MS = 5000;

export interface Stoppable {
  stop(): Promise<void>;
}

/** Starts the servers the configuration asks for (an empty bind address turns one off). */
export function startServers(opts: { cfg: KubeProxyConfig; syncPeriodMs: number; health: SyncHealthTracker; metrics: ProxyMetrics; log: Logger }): Stoppable[] {
  const { cfg, health, metrics, log } = opts;
  const servers: (HealthzServer | MetricsServer)[] = [];
  if (cfg.healthzBindAddress) {
    servers.push(new HealthzServer({ address: cfg.healthzBindAddress, syncPeriodMs: opts.syncPeriodMs, state: () => health.state(), onProbe: (p, c) => metrics.probe(p, c) }));
  }
  if (cfg.metricsBindAddress) {
    servers.push(new MetricsServer({ address: cfg.metricsBindAddress, metrics, configz: () => yaml().parse(writeConfig(cfg)) as unknown }));
  }
  for (const server of servers) keepServing(server, log, cfg.bindAddressHardFail);
  return servers;
}

function keepServing(server: HealthzServer | MetricsServer, log: Logger, hardFail: boolean): void {
  server.start().catch((err: unknown) => {
    if (hardFail) {
      log.error('cannot start server; exiting (bindAddressHardFail)', { reason: (err as Error).message });
      process.exit(1);
    }
    log.error('cannot start server; retrying', { reason: (err as Error).message, retryInMs: RETRY_SERVER_MS });
    setTimeout(() => keepServing(server, log, hardFail), RETRY_SERVER_MS).unref();
  });
}
