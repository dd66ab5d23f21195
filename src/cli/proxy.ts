// `nftlink proxy`: the service proxy, fed by manifests (informers come behind the same source).
// `nftlink render`: the ruleset the proxy would write, as nft -f text. `nftlink cleanup`: remove it.

import { Nftables } from '../nft/client.js';
import { Transaction } from '../nft/transaction.js';
import { layoutConfigs, localhostFamilies, SettingsError } from '../proxy/config.js';
import { LocalhostNodePortProxy } from '../proxy/localhost/localhost-proxy.js';
import { createLayout } from '../proxy/layout/index.js';
import { localhostRejectComment } from '../proxy/layout/names.js';
import { nftFamily } from '../proxy/layout/types.js';
import { silentLogger, type Logger } from '../proxy/log.js';
import { pinoLogger } from '../proxy/pino-logger.js';
import { ChangeTracker } from '../proxy/model/tracker.js';
import { Proxier } from '../proxy/proxier.js';
import { ManifestSource } from '../proxy/source/manifests.js';
import { FamilySync } from '../proxy/sync/family-sync.js';
import { deprecatedPorts, kubeProxyFlags, parseProxyArgs, settingsFrom } from './proxy-flags.js';
import { packageVersion } from '../package-root.js';
import { applyOomScoreAdj } from '../proxy/oom-score.js';
import { watchConfigFile } from './config-watch.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { resolveKubeProxyConfig } from '../k8s/config-flags.js';
import { localTrafficCIDRs, settingsFromConfig } from '../k8s/config-settings.js';
import { applyConntrackSettings, conntrackSettings } from '../proxy/conntrack/sysctls.js';
import type { Node } from '../k8s/objects.js';
import { chooseNodeIPs, nodeHostIPs, type NodeIPs } from '../k8s/node-ips.js';
import type { LayoutConfig } from '../proxy/layout/types.js';
import { InformerSource } from '../k8s/informer-source.js';
import { parseKubeProxyConfig, writeConfig } from '../k8s/kube-proxy-config.js';
import { HealthzServer, isProxyHealthy, SyncHealthTracker } from '../server/healthz.js';
import { ProxyMetrics, recordSync } from '../server/metrics.js';
import { MetricsServer } from '../server/metrics-server.js';
import { healthCheckEntries, ServiceHealthServers } from '../server/service-health.js';
import type { ProxySource } from '../proxy/source/source.js';

function requireManifests(path: string | undefined): string {
  if (!path) throw new SettingsError('--manifests PATH is required (a directory or file of Service and EndpointSlice manifests)');
  return path;
}

/**
 * Configuration as kube-proxy builds it: defaults, then the --config file (which wins), or flags.
 * A file that only strict decoding refuses (an unknown or repeated field) loads as kube-proxy loads
 * it, leniently: those errors come back in `strictErrors`, for the log.
 */
function configOf(values: ReturnType<typeof parseProxyArgs>['values']): ReturnType<typeof resolveKubeProxyConfig> & { strictErrors: string[]; fileText?: string } {
  const strictErrors: string[] = [];
  const fileText = values.config !== undefined ? readFileSync(values.config, 'utf8') : undefined;
  const file = fileText !== undefined ? parseKubeProxyConfig(fileText, values.config, strictErrors) : undefined;
  // As kube-proxy: the deprecated ports apply to neither a --config file nor --write-config-to's output.
  const ports = values['write-config-to'] === undefined ? deprecatedPorts(values) : {};
  return { ...resolveKubeProxyConfig(kubeProxyFlags(values), file, ports), strictErrors, ...(fileText !== undefined ? { fileText } : {}) };
}

/** kube-proxy's "Using lenient decoding as strict decoding failed", once per strict error. */
function logStrictErrors(strictErrors: readonly string[], log: Logger): void {
  for (const error of strictErrors) log.warn('using lenient decoding of --config as strict decoding failed', { error });
}

export async function proxyCommand(argv: string[]): Promise<void> {
  const { values } = parseProxyArgs(argv);
  if (values.version) {
    process.stdout.write(`nftlink v${packageVersion()} (kube-proxy's nftables mode)\n`);
    return;
  }
  const { config: cfg, ignoredFlags, noEffectFlags, strictErrors, fileText } = configOf(values);
  if (values['write-config-to'] !== undefined) {
    writeFileSync(values['write-config-to'], writeConfig(cfg));
    return;
  }
  if (values.cleanup) return cleanupCommand(argv.filter((a) => a !== '--cleanup'));
  const log = pinoLogger(cfg.logVerbosity);
  logStrictErrors(strictErrors, log);
  for (const flag of ignoredFlags) log.warn('flag ignored: --config sets it', { flag });
  for (const { flag, reason } of noEffectFlags) log.info('flag accepted for kube-proxy compatibility; it has no effect', { flag, reason });
  const settings = settingsFromConfig(cfg, settingsFrom(values));

  applyOomScoreAdj(cfg.oomScoreAdj, log);
  if (values.netns === undefined) applyConntrackSettings(conntrackSettings(cfg.conntrack), log);
  else log.warn('conntrack settings are not applied: they belong to the node namespace; run the proxy there instead of with --netns');
  if (values['init-only']) {
    // kube-proxy's --init-only: the privileged set-up (for an init container), then exit.
    log.info('system initialized and --init-only given: exiting');
    return;
  }

  const source: ProxySource =
    values.manifests !== undefined
      ? new ManifestSource(values.manifests, { watch: !values.once })
      : new InformerSource({
          nodeName: settings.nodeName,
          log,
          ...(cfg.clientConnection.kubeconfig ? { kubeconfig: cfg.clientConnection.kubeconfig } : {}),
          // kube-proxy's --master: the API server's URL over the kubeconfig's (with --config too).
          ...(values.master ? { master: values.master } : {}),
        });
  let localhostFamiliesOn = localhostFamilies(settings);
  if (localhostFamiliesOn.length && values.netns !== undefined) {
    log.warn('localhost NodePorts are off: their listeners must live in the node namespace; run the proxy there instead of with --netns');
    localhostFamiliesOn = [];
    settings.localhostNodePorts = false;
  }
  const families = layoutConfigs(settings);
  // detectLocalMode NodeCIDR: the local (pod) CIDRs are the Node's podCIDRs, known once its object
  // arrives. As kube-proxy, the proxy waits for them, and exits (to be restarted) if they change.
  let node: Node | undefined;
  let usedLocalCIDRs: string[] | undefined;
  // This node's IPs: --node-ip's, or found as kube-proxy finds them (its Node, --bind-address) at
  // the first sync, when the Node is known; the proxy exits if the Node's IPs change later.
  let nodeIPs: NodeIPs | undefined;
  let startHostIPs: string[] = [];
  const nodeIPsNow = (): string[] => {
    if (!nodeIPs) {
      startHostIPs = nodeHostIPs(node);
      // The interfaces' addresses stand in only for manifests without a Node (no API server to ask).
      const interfaceAddresses = values.manifests !== undefined ? settings.interfaceAddresses : undefined;
      nodeIPs = chooseNodeIPs({ flagIPs: settings.nodeIPs, bindAddress: cfg.bindAddress, node, interfaceAddresses });
      if (nodeIPs.source === 'loopback') log.warn("can't determine this node's IP, assuming loopback; if this is wrong, set --bind-address or --node-ip", { nodeIPs: nodeIPs.ips });
      else log.info('node IPs', { nodeIPs: nodeIPs.ips, source: nodeIPs.source });
    }
    return nodeIPs.ips;
  };
  const familiesFor = (): LayoutConfig[] | undefined => {
    let clusterCIDRs = settings.clusterCIDRs;
    if (cfg.detectLocalMode === 'NodeCIDR') {
      usedLocalCIDRs = localTrafficCIDRs(cfg, node);
      if (!usedLocalCIDRs) return undefined;
      clusterCIDRs = usedLocalCIDRs;
    }
    return layoutConfigs({ ...settings, clusterCIDRs, nodeIPs: nodeIPsNow() });
  };
  const metrics = new ProxyMetrics({ pending: () => proxier.pending(), changeTotals: () => proxier.changeTotals(), families: families.map((f) => f.family) });
  const localhost = localhostFamiliesOn.length
    ? {
        families: localhostFamiliesOn,
        proxy: new LocalhostNodePortProxy({
          log,
          events: { listenerFailed: (f) => metrics.localhostListenerFailed(f) },
        }),
      }
    : undefined;
  if (localhost) {
    metrics.watchLocalhost(localhost.proxy);
    metrics.localhostRejectedCounts(async () => {
      const counts = await proxier.ruleCounters([localhostRejectComment('udp'), localhostRejectComment('sctp')], 'filter-input');
      return { udp: counts.get(localhostRejectComment('udp')) ?? 0, sctp: counts.get(localhostRejectComment('sctp')) ?? 0 };
    });
  }
  const health = new SyncHealthTracker(() => proxier.pending());
  const healthTimeoutMs = 2 * settings.syncPeriodMs;
  const serviceHealth = new ServiceHealthServers({ proxyHealthy: () => isProxyHealthy(health.state(), healthTimeoutMs, Date.now()) });
  const proxier: Proxier = new Proxier({
    source,
    nodeName: settings.nodeName,
    layout: settings.layout,
    families: familiesFor,
    minSyncPeriodMs: settings.minSyncPeriodMs,
    syncPeriodMs: settings.syncPeriodMs,
    log,
    ...(values.netns !== undefined ? { netns: values.netns } : {}),
    ...(localhost ? { localhost } : {}),
    onChange: () => metrics.changeQueued(),
    onNode: (type, n) => {
      health.node(type, n);
      if (type === 'delete') return;
      node = n;
      // As kube-proxy's NodeManager: a change of the Node's IPs after they were read means a restart
      // (unless --node-ip fixed them, or manifests without a Node gave the interfaces').
      const hostIPs = nodeHostIPs(n);
      if (nodeIPs && nodeIPs.source !== 'flag' && nodeIPs.source !== 'interfaces' && hostIPs.join(',') !== startHostIPs.join(',')) {
        log.error("the node's IPs changed; exiting so that the proxy restarts with them", { before: startHostIPs, now: hostIPs });
        process.exit(1);
      }
      const now = localTrafficCIDRs(cfg, n);
      if (cfg.detectLocalMode === 'NodeCIDR' && usedLocalCIDRs && now && now.join(',') !== usedLocalCIDRs.join(',')) {
        log.error('the node\'s podCIDRs changed; exiting so that the proxy restarts with them', { before: usedLocalCIDRs, now });
        process.exit(1);
      }
    },
    onSync: (report) => {
      recordSync(report, metrics, { states: report.states });
      health.syncDone(report);
      void serviceHealth.reconcile(healthCheckEntries(report.states)).then((failures) => {
        for (const f of failures) log.error('cannot open the health-check NodePort', { service: `${f.namespace}/${f.name}`, port: f.port, reason: f.reason });
      });
    },
  });
  const servers: { stop(): Promise<void> }[] = [];
  if (!values.once) {
    if (cfg.healthzBindAddress) {
      servers.push(new HealthzServer({ address: cfg.healthzBindAddress, syncPeriodMs: settings.syncPeriodMs, state: () => health.state(), onProbe: (p, c) => metrics.probe(p, c) }));
    }
    if (cfg.metricsBindAddress) {
      servers.push(new MetricsServer({ address: cfg.metricsBindAddress, metrics, configz: () => parseYaml(writeConfig(cfg)) as unknown }));
    }
    // As kube-proxy: a server that cannot bind is logged and retried; the proxy keeps programming.
    for (const server of servers as (HealthzServer | MetricsServer)[]) keepServing(server, log, cfg.bindAddressHardFail);
  }
  if (values.config !== undefined && fileText !== undefined && !values.once) {
    watchConfigFile(values.config, fileText, () => {
      log.error('the --config file changed; exiting so that the proxy restarts with it', { file: values.config });
      process.exit(1);
    });
  }
  await proxier.start();
  const stopAll = async (): Promise<void> => {
    await proxier.stop();
    await serviceHealth.stop();
    await Promise.all(servers.map((s) => s.stop()));
  };
  if (values.once) {
    const report = await proxier.syncNow();
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

const RETRY_SERVER_MS = 5000;

/** bindAddressHardFail (--bind-address-hard-fail): a server that cannot bind ends the proxy, as in kube-proxy. */
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

/**
 * What the proxy would write into empty tables, from one read of the manifests, with the same
 * configuration the proxy would run with (flags or --config; the Node manifest's zone and, for
 * detectLocalMode NodeCIDR, its podCIDRs).
 */
export async function renderProxy(argv: string[], log: Logger = silentLogger): Promise<string> {
  const { values } = parseProxyArgs(argv);
  const { config: cfg, strictErrors } = configOf(values);
  logStrictErrors(strictErrors, log);
  const base = settingsFrom(values);
  const tracker = new ChangeTracker({ nodeName: settingsFromConfig(cfg, base).nodeName });
  const source = new ManifestSource(requireManifests(values.manifests), { watch: false });
  let node: Node | undefined;
  await new Promise<void>((resolve, reject) => {
    source
      .start({
        service: (t, s) => tracker.service(t, s),
        endpointSlice: (t, s) => tracker.endpointSlice(t, s),
        node: (t, n) => {
          tracker.node(t, n);
          node = t === 'delete' ? undefined : n;
        },
        synced: () => resolve(),
        problem: (p) => log.error('cannot read object', { origin: p.origin, reason: p.reason }),
      })
      .catch(reject);
  });
  await source.stop();
  const localCIDRs = localTrafficCIDRs(cfg, node);
  if (!localCIDRs && cfg.detectLocalMode === 'NodeCIDR') throw new SettingsError('detectLocalMode NodeCIDR: the manifests have no Node with podCIDRs for this node');
  const settings = settingsFromConfig(cfg, base, localCIDRs);
  const snap = tracker.snapshot();
  for (const inv of snap.invalid) log.error('ignoring invalid object', { kind: inv.kind, object: inv.ref, reason: inv.reason });
  const nodeIPs = chooseNodeIPs({ flagIPs: settings.nodeIPs, bindAddress: cfg.bindAddress, node, interfaceAddresses: settings.interfaceAddresses }).ips;
  let out = '';
  for (const cfg of layoutConfigs({ ...settings, nodeIPs, localhostNodePorts: settings.localhostNodePorts && values.netns === undefined })) {
    const tx: Transaction = new FamilySync(undefined, createLayout(settings.layout), cfg, log).preview(snap.states[cfg.family]);
    out += tx.render();
  }
  return out;
}

export async function renderCommand(argv: string[]): Promise<void> {
  process.stdout.write(await renderProxy(argv, pinoLogger(2)));
}

/** Removes the proxy's tables (both families); a missing table is not an error. */
export async function cleanupCommand(argv: string[]): Promise<void> {
  const { values } = parseProxyArgs(argv);
  const table = values.table ?? 'kube-proxy';
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
