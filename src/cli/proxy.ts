// `nftlink proxy`: the service proxy, fed by manifests (informers come behind the same source).
// `nftlink render`: the ruleset the proxy would write, as nft -f text. `nftlink cleanup`: remove it.

import { Nftables } from '../nft/client.js';
import { Transaction } from '../nft/transaction.js';
import { layoutConfigs, localhostFamilies, SettingsError } from '../proxy/config.js';
import { LocalhostNodePortProxy } from '../proxy/localhost/localhost-proxy.js';
import { kubeProxyLayout } from '../proxy/layout/kube-proxy/index.js';
import { nftFamily } from '../proxy/layout/types.js';
import { jsonLogger, silentLogger, type Logger } from '../proxy/log.js';
import { ChangeTracker } from '../proxy/model/tracker.js';
import { Proxier } from '../proxy/proxier.js';
import { ManifestSource } from '../proxy/source/manifests.js';
import { FamilySync } from '../proxy/sync/family-sync.js';
import { parseProxyArgs, settingsFrom } from './proxy-flags.js';

function logLevel(v: string | undefined): 'info' | 'debug' {
  return v !== undefined && Number(v) >= 4 ? 'debug' : 'info';
}

function requireManifests(path: string | undefined): string {
  if (!path) throw new SettingsError('--manifests PATH is required (a directory or file of Service and EndpointSlice manifests)');
  return path;
}

export async function proxyCommand(argv: string[]): Promise<void> {
  const { values } = parseProxyArgs(argv);
  const settings = settingsFrom(values);
  const log = jsonLogger(logLevel(values.v));
  const source = new ManifestSource(requireManifests(values.manifests), { watch: !values.once });
  let localhostFamiliesOn = localhostFamilies(settings);
  if (localhostFamiliesOn.length && values.netns !== undefined) {
    log.warn('localhost NodePorts are off: their listeners must live in the node namespace; run the proxy there instead of with --netns');
    localhostFamiliesOn = [];
    settings.localhostNodePorts = false;
  }
  const localhost = localhostFamiliesOn.length ? { families: localhostFamiliesOn, proxy: new LocalhostNodePortProxy({ log }) } : undefined;
  const proxier = new Proxier({
    ...(localhost ? { localhost } : {}),
    source,
    nodeName: settings.nodeName,
    layout: kubeProxyLayout,
    families: layoutConfigs(settings),
    minSyncPeriodMs: settings.minSyncPeriodMs,
    syncPeriodMs: settings.syncPeriodMs,
    log,
    ...(values.netns !== undefined ? { netns: values.netns } : {}),
  });
  await proxier.start();
  if (values.once) {
    const report = await proxier.syncNow();
    await proxier.stop();
    if (report.error) throw report.error;
    for (const r of report.results) log.info('synced', { ...r });
    return;
  }
  log.info('proxy started', { node: settings.nodeName, table: settings.table, manifests: values.manifests });
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      void proxier.stop().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** What the proxy would write into empty tables, from one read of the manifests. */
export async function renderProxy(argv: string[], log: Logger = silentLogger): Promise<string> {
  const { values } = parseProxyArgs(argv);
  const settings = settingsFrom(values);
  const tracker = new ChangeTracker({ nodeName: settings.nodeName });
  const source = new ManifestSource(requireManifests(values.manifests), { watch: false });
  await new Promise<void>((resolve, reject) => {
    source
      .start({
        service: (t, s) => tracker.service(t, s),
        endpointSlice: (t, s) => tracker.endpointSlice(t, s),
        synced: () => resolve(),
        problem: (p) => log.error('cannot read object', { origin: p.origin, reason: p.reason }),
      })
      .catch(reject);
  });
  await source.stop();
  const snap = tracker.snapshot();
  for (const inv of snap.invalid) log.error('ignoring invalid object', { kind: inv.kind, object: inv.ref, reason: inv.reason });
  let out = '';
  for (const cfg of layoutConfigs({ ...settings, localhostNodePorts: settings.localhostNodePorts && values.netns === undefined })) {
    const tx: Transaction = new FamilySync(undefined, kubeProxyLayout, cfg, log).preview(snap.states[cfg.family]);
    out += tx.render();
  }
  return out;
}

export async function renderCommand(argv: string[]): Promise<void> {
  process.stdout.write(await renderProxy(argv, jsonLogger('info')));
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
