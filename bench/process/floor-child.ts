// The floor under the measured process: what the kernel itself takes to commit the very ruleset
// `nftlink proxy --once` writes, as one batch per family, encoded before the clock starts (so only
// the addon's send and the kernel's commit are timed, as in `npm run bench:load`'s load floor).
// Added to a bare `node -e ''` start it is what no proxy written in Node could go below.
//
//   node dist-bench/bundle/process-floor.js <netns> <the proxy's flags: --manifests FILE ...>
//
// It builds the transactions as `nftlink render` does (src/cli/proxy.ts, renderProxy), which
// returns text only: the same settings from the same flags, the same model, FamilySync.preview.
// Prints one JSON line: commitMs (the batches' commits, summed), bytes, operations.

import { ManifestSource } from '../../src/proxy/source/manifests.js';
import { ChangeTracker } from '../../src/proxy/model/tracker.js';
import { FamilySync } from '../../src/proxy/sync/family-sync.js';
import { createLayout } from '../../src/proxy/layout/index.js';
import { flagSettings, parseProxyArgs } from '../../src/config/command-line.js';
import { loadProxyConfig } from '../../src/config/load.js';
import { settingsFromConfig } from '../../src/config/proxy-settings.js';
import { chooseNodeIPs } from '../../src/config/node-ips.js';
import { layoutConfigs } from '../../src/config/layout-configs.js';
import { silentLogger } from '../../src/logging/logger.js';
import { loadNative } from '../../src/native/binding.js';

async function batches(argv: string[]): Promise<{ buf: Uint8Array; operations: number }[]> {
  const { values } = parseProxyArgs(argv);
  if (values.manifests === undefined) throw new Error('process-floor: --manifests FILE is required');
  const { config: cfg } = loadProxyConfig(values);
  const settings = settingsFromConfig(cfg, flagSettings(values));
  const tracker = new ChangeTracker({ nodeName: settings.nodeName });
  const source = new ManifestSource(values.manifests, { watch: false });
  await new Promise<void>((resolve, reject) => {
    source
      .start({
        service: (t, s) => tracker.service(t, s),
        endpointSlice: (t, s) => tracker.endpointSlice(t, s),
        node: (t, n) => tracker.node(t, n),
        synced: () => resolve(),
        problem: (p) => reject(new Error(`process-floor: ${p.origin}: ${p.reason}`)),
      })
      .catch(reject);
  });
  await source.stop();
  const snap = tracker.snapshot();
  // The benchmark gives --node-ip: no Node manifest, no interface look-up needed.
  const nodeIPs = chooseNodeIPs({ flagIPs: settings.nodeIPs, bindAddress: cfg.bindAddress, node: undefined, interfaceAddresses: settings.interfaceAddresses }).ips;
  // The proxy runs with --netns: no localhost NodePorts (as renderProxy decides for --netns).
  return layoutConfigs({ ...settings, nodeIPs, localhostNodePorts: false }).map((lc) => {
    const tx = new FamilySync(undefined, createLayout(settings.layout), lc, silentLogger).preview(snap.states[lc.family]);
    return { buf: tx.encode().buffer, operations: tx.size };
  });
}

async function main(): Promise<Record<string, number>> {
  const [netns, ...argv] = process.argv.slice(2);
  if (!netns) throw new Error('usage: process-floor.js <netns> --manifests FILE [proxy flags]');
  const txs = await batches(argv);
  const native = loadNative();
  const h = native.open(netns);
  try {
    let commitMs = 0;
    for (const { buf } of txs) {
      const t0 = performance.now();
      const { errors } = await native.commit(h, buf);
      commitMs += performance.now() - t0;
      if (errors.length > 0) throw new Error(`process-floor: the batch was refused: errno ${errors[0]!.errno} ${errors[0]!.message}`);
    }
    return { commitMs, bytes: txs.reduce((s, t) => s + t.buf.byteLength, 0), operations: txs.reduce((s, t) => s + t.operations, 0) };
  } finally {
    native.close(h);
  }
}

main().then(
  (out) => {
    process.stdout.write(JSON.stringify(out) + '\n');
    // Exit at once: tearing down the model's heap is not the kernel's time (nor measured here).
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
