// One measured step of `npm run bench`, in its own process so that its peak RSS is the proxy's own
// (the model, the layout's objects, the sync engine's view of the kernel) and nothing else's:
//
//   node dist/bundle/scale-child.js full    <netns> --layout L --services N --endpoints E
//   node dist/bundle/scale-child.js restart <netns> --layout L --services N --endpoints E   (table loaded by `full`)
//   node dist/bundle/scale-child.js churn   <netns> --layout L --services N --endpoints E --counts 1,10,100 --repeats R
//   node dist/bundle/scale-child.js render  -       --layout L --services N --endpoints E --out FILE
//
// Durations are the proxy's sync as FamilySync.sync() reports it: layout, diff and commit (and, for
// a restart, the read-back). Prints one JSON line.

import { writeFileSync } from 'node:fs';
import { Nftables } from '../../src/nft/client.js';
import { createLayout, isLayoutName, type LayoutName } from '../../src/proxy/layout/index.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { StateChange } from '../../src/proxy/model/types.js';
import { FamilySync } from '../../src/proxy/sync/family-sync.js';
import { previewTransaction } from '../../src/proxy/sync/planner.js';
import { BenchModel, benchConfig, change } from '../../test/fixtures/scale-model.js';
import { waitQuiet } from '../measure.js';

export const CHURN_KINDS = ['replace', 'scale-up', 'scale-down', 'add', 'remove'] as const;
export type ChurnKind = (typeof CHURN_KINDS)[number];

function option(args: string[], name: string): string {
  const i = args.indexOf(`--${name}`);
  if (i < 0 || args[i + 1] === undefined) throw new Error(`child: --${name} is required`);
  return args[i + 1]!;
}
const int = (args: string[], name: string): number => {
  const v = Number(option(args, name));
  if (!Number.isInteger(v) || v < 0) throw new Error(`child: --${name} needs a non-negative integer`);
  return v;
};

/** Applies one churn step to `count` services and returns what changed. */
function churnStep(model: BenchModel, kind: ChurnKind, count: number, round: number, perService: number): StateChange {
  if (kind === 'add') return change({ services: Array.from({ length: count }, () => model.addService(perService)) });
  const ids = model.pick(count, round);
  for (const id of ids) {
    if (kind === 'replace') model.replaceEndpoint(id);
    else if (kind === 'scale-up') model.scaleUp(id);
    else if (kind === 'scale-down') model.scaleDown(id);
    else model.removeService(id);
  }
  return kind === 'remove' ? change({ removed: ids }) : change({ endpoints: ids });
}

async function main(): Promise<Record<string, unknown>> {
  const [what, netns, ...args] = process.argv.slice(2);
  const layoutName = option(args, 'layout');
  if (!isLayoutName(layoutName)) throw new Error(`child: unknown layout ${layoutName}`);
  const layout: LayoutName = layoutName;
  const perService = int(args, 'endpoints');
  const model = new BenchModel(int(args, 'services'), perService);
  const cfg = benchConfig();

  if (what === 'render') {
    const tx = previewTransaction(createLayout(layout), cfg, model.state(), silentLogger);
    writeFileSync(option(args, 'out'), tx.render());
    return { operations: tx.size };
  }
  if (!netns) throw new Error('child: a namespace is required');
  const nft = Nftables.open({ netns });
  try {
    const sync = new FamilySync(nft, createLayout(layout), cfg, silentLogger);
    const first = await sync.sync(model.state(), undefined);
    // A cold start keys some of what it wrote after its commit (ElementIndex): the proxy does it in
    // the background; here it is timed on its own, and the process's wall and RSS include it.
    const settleMs = sync.settleIndex();
    const rssAfterSyncMB = process.memoryUsage().rss / 2 ** 20;
    if (what === 'full' || what === 'restart') {
      // A restart is a fresh engine (no memory of what it wrote) against a loaded table.
      return { syncMs: first.durationMs, settleMs, operations: first.operations, rssAfterSyncMB };
    }
    if (what !== 'churn') throw new Error(`child: unknown step ${what}`);
    // The load leaves kernel work behind (hash tables resize in deferred work): not the churn's.
    await waitQuiet();
    const counts = option(args, 'counts').split(',').map(Number);
    const repeats = int(args, 'repeats');
    const runs: { kind: ChurnKind; count: number; syncMs: number[]; operations: number[] }[] = [];
    let round = 0;
    for (const kind of CHURN_KINDS) {
      for (const count of counts) {
        const rec = { kind, count, syncMs: [] as number[], operations: [] as number[] };
        for (let r = 0; r < repeats; r++) {
          const ch = churnStep(model, kind, count, ++round * 7, perService);
          const res = await sync.sync(model.state(), ch);
          rec.syncMs.push(res.durationMs);
          rec.operations.push(res.operations);
        }
        runs.push(rec);
      }
    }
    return { churn: runs, rssAfterSyncMB };
  } finally {
    nft.close();
  }
}

main().then(
  (out) => {
    const ru = process.resourceUsage();
    process.stdout.write(JSON.stringify({ ...out, maxRssMB: ru.maxRSS / 1024 }) + '\n');
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
