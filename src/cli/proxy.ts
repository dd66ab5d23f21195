// `nftlink proxy`: the service proxy, fed by manifests or the API server's informers.
// `nftlink render`: the ruleset the proxy would write, as nft -f text. `nftlink cleanup`: remove it.

import { writeFileSync } from 'node:fs';
import { Nftables, Transaction } from '../nft/index.js';
import { flagSettings, parseProxyArgs, type ProxyFlagValues } from '../config/command-line.js';
import { writeConfig, type KubeProxyConfig } from '../config/kube-proxy-config.js';
import { layoutConfigs, localhostFamilies } from '../config/layout-configs.js';
import { loadProxyConfig, logConfigLoad, logStrictErrors } from '../config/load.js';
import { settingsFromConfig, SettingsError, type ProxySettings } from '../config/proxy-settings.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { pinoLogger } from '../logging/pino-logger.js';
import { applyConntrackSettings, conntrackSettings } from '../proxy/conntrack/sysctls.js';
import { DEFAULT_TABLE, localhostRejectComment } from '../proxy/layout/names.js';
import { nftFamily } from '../proxy/layout/types.js';
import { LocalhostNodePortProxy } from '../proxy/localhost/localhost-proxy.js';
import type { IPFamily } from '../proxy/model/types.js';
import { applyOomScoreAdj } from '../proxy/oom-score.js';
import { Proxier, type FamilyPreview, type ProxierOptions, type SyncReport } from '../proxy/proxier.js';
import { ManifestSource } from '../proxy/source/manifests.js';
import type { ProxySource } from '../proxy/source/source.js';
import { isProxyHealthy, SyncHealthTracker } from '../server/healthz.js';
import type { ProxyMetrics } from '../server/metrics.js';
import { healthCheckEntries, ServiceHealthServers } from '../server/service-health.js';
import { packageVersion } from '../package-root.js';
import { watchConfigFile } from './config-watch.js';
import { NodeWatch } from './node-watch.js';
import { startServers, type Stoppable } from './servers.js';

function requireManifests(path: string | undefined): string {
  if (!path) throw new SettingsError('--manifests PATH is required (a directory or file of Service and EndpointSlice manifests)');
  return path;
}

/**
 * Where Services, EndpointSlices and the Node come from: --manifests, else the API server. The
 * informers' module (and the Kubernetes client under it) is loaded only when they are used.
 */
async function proxySource(values: ProxyFlagValues, cfg: KubeProxyConfig, settings: ProxySettings, log: Logger): Promise<ProxySource> {
  if (values.manifests !== undefined) return new ManifestSource(values.manifests, { watch: !values.once });
  const { InformerSource } = await import('../proxy/source/informers.js');
  return new InformerSource({
    nodeName: settings.nodeName,
    log,
    ...(cfg.clientConnection.kubeconfig ? { kubeconfig: cfg.clientConnection.kubeconfig } : {}),
    // kube-proxy's --master: the API server's URL over the kubeconfig's (with --config too).
    ...(values.master ? { master: values.master } : {}),
  });
}

/** The privileged set-up kube-proxy does at start: oom_score_adj and the conntrack sysctls. */
function initializeSystem(values: ProxyFlagValues, cfg: KubeProxyConfig, log: Logger): void {
  applyOomScoreAdj(cfg.oomScoreAdj, log);
  if (values.netns === undefined) applyConntrackSettings(conntrackSettings(cfg.conntrack), log);
  else log.warn('conntrack settings are not applied: they belong to the node namespace; run the proxy there instead of with --netns');
}

/**
 * The families whose NodePorts on loopback the userspace proxy serves; none with --netns, where its
 * listeners would not be in the node namespace (settings.localhostNodePorts is turned off then).
 */
function localhostNodePortFamilies(values: ProxyFlagValues, settings: ProxySettings, log: Logger): IPFamily[] {
  const families = localhostFamilies(settings);
  if (!families.length || values.netns === undefined) return families;
  log.warn('localhost NodePorts are off: their listeners must live in the node namespace; run the proxy there instead of with --netns');
  settings.localhostNodePorts = false;
  return [];
}

/** The localhost NodePort proxy, its listener failures and the ruleset's rejections counted in the metrics. */
function localhostNodePorts(families: IPFamily[], metrics: ProxyMetrics | undefined, ruleCounters: (comments: string[]) => Promise<Map<string, number>>, log: Logger) {
  const proxy = new LocalhostNodePortProxy({ log, events: { listenerFailed: (f) => metrics?.localhostListenerFailed(f) } });
  if (!metrics) return { families, proxy };
  metrics.watchLocalhost(proxy);
  metrics.localhostRejectedCounts(async () => {
    const counts = await ruleCounters([localhostRejectComment('udp'), localhostRejectComment('sctp')]);
    return { udp: counts.get(localhostRejectComment('udp')) ?? 0, sctp: counts.get(localhostRejectComment('sctp')) ?? 0 };
  });
  return { families, proxy };
}

/** The Proxier's options that come from the settings, with the node's tables' configuration. */
function settingsOptions(settings: ProxySettings, nodeWatch: NodeWatch): Pick<ProxierOptions, 'nodeName' | 'layout' | 'families' | 'minSyncPeriodMs' | 'syncPeriodMs' | 'fullSyncPeriodMs'> {
  return {
    ...(settings.fullSyncPeriodMs !== undefined ? { fullSyncPeriodMs: settings.fullSyncPeriodMs } : {}),
    nodeName: settings.nodeName,
    layout: settings.layout,
    families: () => nodeWatch.families(),
    minSyncPeriodMs: settings.minSyncPeriodMs,
    syncPeriodMs: settings.syncPeriodMs,
  };
}

export async function proxyCommand(argv: string[]): Promise<void> {
  const { values } = parseProxyArgs(argv);
  if (values.version) {
    process.stdout.write(`nftlink v${packageVersion()} (kube-proxy's nftables mode)\n`);
    return;
  }
  const loaded = loadProxyConfig(values);
  const { config: cfg, fileText } = loaded;
  if (values['write-config-to'] !== undefined) {
    writeFileSync(values['write-config-to'], writeConfig(cfg));
    return;
  }
  if (values.cleanup) return cleanupCommand(argv.filter((a) => a !== '--cleanup'));
  const log = pinoLogger(cfg.logVerbosity);
  logConfigLoad(loaded, log);
  const settings = settingsFromConfig(cfg, flagSettings(values));

  initializeSystem(values, cfg, log);
  if (values['init-only']) {
    // kube-proxy's --init-only: the privileged set-up (for an init container), then exit.
    log.info('system initialized and --init-only given: exiting');
    return;
  }

  const source = await proxySource(values, cfg, settings, log);
  const localhostFamiliesOn = localhostNodePortFamilies(values, settings, log);
  const families = layoutConfigs(settings);
  const nodeWatch = new NodeWatch({ cfg, settings, interfaceAddresses: values.manifests !== undefined ? settings.interfaceAddresses : undefined, log });
  // Metrics are for the servers of a long-running proxy: --once does not load prom-client.
  const metricsModule = values.once ? undefined : await import('../server/metrics.js');
  const metrics = metricsModule ? new metricsModule.ProxyMetrics({ pending: () => proxier.pending(), changeTotals: () => proxier.changeTotals(), families: families.map((f) => f.family) }) : undefined;
  const localhost = localhostFamiliesOn.length ? localhostNodePorts(localhostFamiliesOn, metrics, (comments) => proxier.ruleCounters(comments, 'filter-input'), log) : undefined;
  const health = new SyncHealthTracker(() => proxier.pending());
  const healthTimeoutMs = 2 * settings.syncPeriodMs;
  // Health-check NodePorts are for load balancers asking a running proxy: not for --once.
  const serviceHealth = values.once ? undefined : new ServiceHealthServers({ proxyHealthy: () => isProxyHealthy(health.state(), healthTimeoutMs, Date.now()) });
  const proxier: Proxier = new Proxier({
    source,
    connect: () => Nftables.open(values.netns !== undefined ? { netns: values.netns } : {}),
    ...settingsOptions(settings, nodeWatch),
    log,
    ...(values.netns !== undefined ? { netns: values.netns } : {}),
    ...(localhost ? { localhost } : {}),
    onChange: () => metrics?.changeQueued(),
    onExternalChange: (change) => {
      for (const family of change.families) {
        if (change.lost) metrics?.externalChange(family, 'lost');
        for (const kind of change.kinds.get(family) ?? []) metrics?.externalChange(family, kind);
      }
    },
    onRepair: (family, ms) => metrics?.repaired(family, ms / 1000),
    repairOutsideChanges: !values.once,
    onNode: (type, n) => {
      health.node(type, n);
      if (type !== 'delete') nodeWatch.nodeChanged(n);
    },
    onSync: (report) => {
      if (metricsModule && metrics) metricsModule.recordSync(report, metrics, { states: report.states });
      health.syncDone(report);
      void serviceHealth?.reconcile(healthCheckEntries(report.states)).then((failures) => {
        for (const f of failures) log.error('cannot open the health-check NodePort', { service: `${f.namespace}/${f.name}`, port: f.port, reason: f.reason });
      });
    },
  });
  const servers: Stoppable[] = !metrics ? [] : startServers({ cfg, syncPeriodMs: settings.syncPeriodMs, health, metrics, log });
  if (values.config !== undefined && fileText !== undefined && !values.once) {
    watchConfigFile(values.config, fileText, () => {
      log.error('the --config file changed; exiting so that the proxy restarts with it', { file: values.config });
      process.exit(1);
    });
  }
  const stopAll = async (): Promise<void> => {
    await proxier.stop();
    await serviceHealth?.stop();
    await Promise.all(servers.map((s) => s.stop()));
  };
  // --once reads the source, stops it and syncs once (Proxier.runOnce); a proxy that runs on starts.
  let report: SyncReport | undefined;
  try {
    if (values.once) report = await proxier.runOnce();
    else await proxier.start();
  } catch (err) {
    // A source that cannot be read at start-up (manifests that do not read) has programmed
    // nothing: end with its error (exit 1) rather than let the servers answer 200 meanwhile.
    await stopAll().catch(() => {});
    throw err;
  }
  if (report) {
    await stopAll();
    if (report.error) throw report.error;
    for (const r of report.results) log.info('synced', { ...r });
    return;
  }
  log.info('proxy started', { node: settings.nodeName, table: settings.table, source: values.manifests ?? 'API server' });
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      void stopAll().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * What the proxy would write into empty tables, from one read of the manifests, with the same
 * configuration the proxy would run with (flags or --config; the Node manifest's zone and, for
 * detectLocalMode NodeCIDR, its podCIDRs): the Proxier in preview mode, which connects to nothing.
 */
export async function previewProxy(argv: string[], log: Logger = silentLogger): Promise<FamilyPreview[]> {
  const { values } = parseProxyArgs(argv);
  const { config: cfg, strictErrors } = loadProxyConfig(values);
  logStrictErrors(strictErrors, log);
  const settings = settingsFromConfig(cfg, flagSettings(values));
  // The localhost NodePort rules belong to the node namespace's proxy (see localhostNodePortFamilies).
  if (values.netns !== undefined) settings.localhostNodePorts = false;
  const nodeWatch = new NodeWatch({ cfg, settings, interfaceAddresses: settings.interfaceAddresses, log: silentLogger, exit: () => {} });
  const proxier = new Proxier({
    source: new ManifestSource(requireManifests(values.manifests), { watch: false }),
    connect: () => {
      throw new Error('nftlink render connects to nothing');
    },
    ...settingsOptions(settings, nodeWatch),
    log,
    onNode: (type, n) => {
      if (type !== 'delete') nodeWatch.nodeChanged(n);
    },
  });
  return proxier.preview();
}

/** previewProxy's transactions as nft -f text (`nftlink render`). */
export async function renderProxy(argv: string[], log: Logger = silentLogger): Promise<string> {
  return (await previewProxy(argv, log)).map((p) => p.transaction.render()).join('');
}

export async function renderCommand(argv: string[]): Promise<void> {
  process.stdout.write(await renderProxy(argv, pinoLogger(2)));
}

/** Removes the proxy's tables (both families); a missing table is not an error. */
export async function cleanupCommand(argv: string[]): Promise<void> {
  const { values } = parseProxyArgs(argv);
  const table = values.table ?? DEFAULT_TABLE;
  const nft = Nftables.open(values.netns !== undefined ? { netns: values.netns } : {});
  try {
    const rs = await nft.dump({ elements: false });
    const tx = new Transaction();
    for (const f of ['ipv4', 'ipv6'] as const) {
      const family = nftFamily(f);
      if (rs.tables.some((t) => t.family === family && t.name === table)) tx.delete({ table: { family, name: table } });
    }
    await nft.commit(tx);
  } finally {
    nft.close();
  }
}
