// `npm run bench`, the scale benchmark: the proxy's sync engine over netlink against `nft -f` of the
// text it renders, side by side in one run, in fresh namespaces:
//   full sync   1k, 10k, 30k services x 5 endpoints, and 10k x 1, with each layout, both ways
//   churn       1, 10 and 100 services changed on a 10k table (endpoint replaced, scaled up, scaled
//               down, service added, service removed): the proxy's sync duration (diff + commit)
//   restart     a fresh engine reading a 10k table back: read-back + diff, and what it writes
//   RSS         peak RSS of the engine's process after a full sync
// Prints tables and PASS/MISS per target, writes every run to bench-results/scale.json and the
// chart to docs/bench/scale.svg.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { machineInfo, speedText } from '../machine.js';
import { GNU_TIME, measuredEnvText } from '../measure.js';
import { parseScaleArgs } from './args.js';
import { churn, fullNetlink, fullNft, renderText, restart, type ChurnRecord, type FullRun, type RestartRecord } from './cases.js';
import { churnMedians, fullMedians, renderChurn, renderFull, renderRestart, renderTargets, scaleChart, targets } from './report.js';

/** kube-proxy's layout at 20k services and more takes minutes per run: fewer repetitions. */
const SLOW_SERVICES = 20_000;

async function main(argv: string[]): Promise<void> {
  const opts = parseScaleArgs(argv);
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} is missing (Debian: apt-get install time)`);
  const machine = machineInfo();
  const started = Date.now();
  const log = (s: string): boolean => process.stderr.write(`${s}\n`);
  log(`nftlink scale benchmark on Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs; runs=${opts.runs}`);

  const full: FullRun[] = [];
  for (const [services, endpoints] of opts.sizes) {
    for (const layout of opts.layouts) {
      const runs = layout === 'kube-proxy' && services >= SLOW_SERVICES ? Math.min(opts.slowRuns, opts.runs) : opts.runs;
      const file = await renderText(layout, services, endpoints);
      for (let run = 0; run < runs; run++) {
        // Alternate the sides so that drift on a noisy machine hits both alike.
        const a = await fullNetlink(layout, services, endpoints, run);
        const b = await fullNft(layout, services, endpoints, run, file);
        full.push(a, b);
        log(`  ${services}x${endpoints} ${layout} run ${run + 1}/${runs}: netlink sync ${a.sync!.toFixed(3)} s (process ${a.wall.toFixed(3)} s, ${a.rssMB.toFixed(0)} MB), nft -f ${b.wall.toFixed(3)} s`);
      }
    }
  }

  const churns: ChurnRecord[] = [];
  for (const layout of opts.layouts) {
    log(`  churn on ${opts.churnServices}x5, ${layout}`);
    churns.push(...(await churn(layout, opts.churnServices, 5, opts.churnCounts, opts.churnRepeats)));
  }
  const restarts: RestartRecord[] = [];
  for (const layout of opts.layouts) {
    for (let run = 0; run < opts.runs; run++) restarts.push(await restart(layout, opts.churnServices, 5, run));
    log(`  restart on ${opts.churnServices}x5, ${layout}: done`);
  }

  const fm = fullMedians(full);
  const cm = churnMedians(churns);
  const ts = targets(fm, cm, restarts);
  const out = resolve(opts.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ machine, options: opts, elapsedS: (Date.now() - started) / 1000, full, churn: churns, restarts, medians: { full: fm, churn: cm }, targets: ts }, null, 2) + '\n');
  const chart = resolve(opts.chart);
  mkdirSync(dirname(chart), { recursive: true });
  writeFileSync(chart, scaleChart(fm));

  process.stdout.write(
    `\nnftlink scale benchmark: Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs, ${speedText(machine)}; medians\n` +
      `command: npm run bench -- ${argv.join(' ')}\n` +
      `sync: the proxy's sync (layout + diff + commit) inside the process; settle: keying, after the sync, the elements a cold start wrote unkeyed (the proxy does it in the background); wall/user/sys/RSS: the whole process (node start-up included, settle too), GNU time${measuredEnvText()}\n\n` +
      renderFull(fm) +
      `\n\nChurn on a ${opts.churnServices}-service table (sync duration per change):\n` +
      renderChurn(cm) +
      `\n\n` +
      renderRestart(restarts) +
      `\n\nTargets:\n` +
      renderTargets(ts) +
      `\n\nruns: ${out}; chart: ${chart} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  // Exit through process.exit so the namespace cleanup hooks on 'exit' run.
  process.exit(1);
});
