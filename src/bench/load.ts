// `npm run bench:load`: nftlink over netlink against `nft -f` of the same transaction's rendered
// text, side by side in one run, each side in fresh network namespaces (never the root one):
//   (a) 100,000 elements into one concatenated map, one transaction
//   (b) 10,000 services x 5 endpoints in the five ruleset shapes of DESIGN.md's "Kernel facts"
//   (c) one element delete+add into the 100k map, repeated
//   (d) dumping the 100k map
// Prints a table and PASS/MISS per target on stdout, progress on stderr, and writes every raw run
// and the medians to bench-results/load.json. `--quick` is a CI smoke run (1 run, a tenth the size).

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from './args.js';
import { caseA, caseB, caseC, caseD } from './cases.js';
import { machineInfo, speedText } from './machine.js';
import { GNU_TIME, measuredEnvText } from './measure.js';
import { renderTable, renderTargets, targets } from './report.js';
import type { CaseResult } from './results.js';
import type { ShapeId } from './shapes.js';

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  if (!existsSync(GNU_TIME)) throw new Error(`bench: ${GNU_TIME} is missing (Debian: apt-get install time)`);
  const machine = machineInfo();
  const started = Date.now();
  process.stderr.write(`bench:load on Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs; runs=${opts.runs}${opts.quick ? ' (quick)' : ''}\n`);

  const results: CaseResult[] = [];
  if (opts.cases.includes('a')) results.push(await caseA(opts));
  if (opts.cases.includes('b')) for (const s of opts.shapes) results.push(await caseB(opts, s as ShapeId));
  if (opts.cases.includes('c')) results.push(await caseC(opts));
  if (opts.cases.includes('d')) results.push(await caseD(opts));

  const list = targets(results);
  const out = resolve(opts.out);
  mkdirSync(dirname(out), { recursive: true });
  const json = { machine, options: opts, elapsedS: (Date.now() - started) / 1000, cases: results, targets: list };
  writeFileSync(out, JSON.stringify(json, null, 2) + '\n');

  process.stdout.write(
    `\nnftlink load benchmark: Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs, ${speedText(machine)}, ` +
      `medians of ${opts.runs} run(s) per side${opts.quick ? ' (quick sizes)' : ''}\n` +
      `wall: whole process (node start-up included); user/sys/peak RSS: rusage via GNU time${measuredEnvText()}\n\n` +
      renderTable(results) +
      `\nTargets (nftlink medians):\n` +
      renderTargets(list) +
      `\nraw runs and medians: ${out} (${json.elapsedS.toFixed(0)} s)\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:load failed: ${err instanceof Error ? err.message : String(err)}\n`);
  // Exit through process.exit so the namespace cleanup hooks on 'exit' run.
  process.exit(1);
});
