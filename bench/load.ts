// `npm run bench:load`: nftlink over netlink against `nft -f` of the same transaction's rendered
// text, side by side in one run, each side in fresh network namespaces (never the root one):
//   (a) 100,000 elements into one concatenated map, one transaction
//   (b) 10,000 services x 5 endpoints in the five ruleset shapes of docs/architecture.md's "Kernel facts"
//   (c) one element delete+add into the 100k map, repeated
//   (d) dumping the 100k map
// Prints a table and PASS/MISS per target on stdout, progress on stderr, writes every raw run and
// the medians to bench-results/load.json and draws docs/bench/load.svg. `--quick` is a CI smoke run
// (1 run, a tenth the size). `--from FILE` prints the report and draws the chart of a saved run.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs, type BenchOptions } from './args.js';
import { caseA, caseB, caseC, caseD } from './cases.js';
import { loadChart } from './load-chart.js';
import { machineInfo, speedText, type MachineInfo } from './machine.js';
import { GNU_TIME, measuredEnvText } from './measure.js';
import { referenceNote, renderTable, renderTargets, targets } from './report.js';
import type { CaseResult } from './results.js';
import type { ShapeId } from './shapes.js';

/** What a run writes to its JSON file (and what --from reads back). */
interface SavedRun {
  machine: MachineInfo;
  options: BenchOptions;
  /** When the run ended (ISO 8601; absent in runs saved before 3 December 2026). */
  finishedAt?: string;
  elapsedS: number;
  cases: CaseResult[];
}

async function measure(opts: BenchOptions): Promise<SavedRun> {
  if (!existsSync(GNU_TIME)) throw new Error(`bench: ${GNU_TIME} is missing (Debian: apt-get install time)`);
  const machine = machineInfo();
  const started = Date.now();
  process.stderr.write(`bench:load on Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs; runs=${opts.runs}${opts.quick ? ' (quick)' : ''}\n`);
  const results: CaseResult[] = [];
  if (opts.cases.includes('a')) results.push(await caseA(opts));
  if (opts.cases.includes('b')) for (const s of opts.shapes) results.push(await caseB(opts, s as ShapeId));
  if (opts.cases.includes('c')) results.push(await caseC(opts));
  if (opts.cases.includes('d')) results.push(await caseD(opts));
  const run: SavedRun = { machine, options: opts, finishedAt: new Date().toISOString(), elapsedS: (Date.now() - started) / 1000, cases: results };
  const out = resolve(opts.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ ...run, targets: targets(results) }, null, 2) + '\n');
  return run;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const run: SavedRun = opts.from ? (JSON.parse(readFileSync(opts.from, 'utf8')) as SavedRun) : await measure(opts);
  const { machine, options } = run;
  const list = targets(run.cases);
  const reference = referenceNote(run.cases);
  const when = run.finishedAt ? `, ${run.finishedAt.slice(0, 16).replace('T', ' ')} UTC` : '';
  const chart = resolve(opts.chart);
  mkdirSync(dirname(chart), { recursive: true });
  const chartTitle = `npm run bench:load: Linux ${machine.kernel.split('-')[0]}, ${machine.cpuCount} CPUs, speed index ${machine.speedIndexMs.toFixed(0)} ms${when}`;
  writeFileSync(chart, loadChart(run.cases, chartTitle));

  process.stdout.write(
    `\nnftlink load benchmark: Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs, ${speedText(machine)}, ` +
      `medians of ${options.runs} run(s) per side${options.quick ? ' (quick sizes)' : ''}${when}\n` +
      `wall: whole process (node start-up included); user/sys/peak RSS: rusage via GNU time${measuredEnvText()}\n\n` +
      renderTable(run.cases) +
      `\nTargets (nftlink medians):\n` +
      renderTargets(list) +
      (reference ? `${reference}\n` : '') +
      `\n${opts.from ? `from the saved run ${resolve(opts.from)}` : `raw runs and medians: ${resolve(opts.out)}`} (${run.elapsedS.toFixed(0)} s); chart: ${chart}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:load failed: ${err instanceof Error ? err.message : String(err)}\n`);
  // Exit through process.exit so the namespace cleanup hooks on 'exit' run.
  process.exit(1);
});
