// `npm run bench:process`, issue 29's whole-process benchmark: the process a user runs, `nftlink
// proxy --once --manifests FILE`, timed from outside (GNU time: wall, user, sys, peak RSS) cold into
// a fresh namespace and again on the table it programmed, side by side in the same run with `nft -f`
// of the same ruleset, `nft -f` of kube-proxy's own text, and the floor (the kernel's commit of the
// same batches + a bare node start); the order rotates run by run (cases.ts). Prints medians, ratios
// and the targets, writes every run to bench-results/process.json and the chart to
// docs/bench/process.svg.
//
// Options add issue 29's other cases to the same run: --informers, a long-running proxy cold to the
// end of its first sync fed by the manifests and by the informers from an API server in this
// process (apiserver.ts), side by side; --churn-seconds, churn memory; --delta-changes, the churn
// ratio against `nft -f` of the same delta (churn.ts).

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { LayoutName } from '../../src/proxy/layout/index.js';
import { rotation } from '../cases.js';
import { machineInfo, speedText, type MachineInfo } from '../machine.js';
import { GNU_TIME, measuredEnvText } from '../measure.js';
import { parseProcessArgs, PROCESS_USAGE, type ProcessOptions } from './args.js';
import { BenchApiServer } from './apiserver.js';
import { firstSyncRun, floorRun, manifestDir, nftRun, nodeStartRun, proxyRuns, readRun, renderText, type ProcessRun } from './cases.js';
import { churnRun, deltaRun, type ChurnResult, type DeltaResult } from './churn.js';
import { busyText, churnTargets, FLOORS_FOR_SLOPE, processChart, processMedians, processTargets, renderChurn, renderDeltas, renderProcess } from './report.js';
import { renderTargets } from '../scale/report.js';

type Step = { kind: 'proxy' | 'live manifests' | 'live informers' | 'nft' | 'floor'; layout: LayoutName } | { kind: 'node' } | { kind: 'reads' };

const log = (s: string): void => void process.stderr.write(`${s}\n`);

interface Measured {
  runs: ProcessRun[];
  churn: ChurnResult[];
  deltas: DeltaResult[];
}

async function measure(opts: ProcessOptions, sizeDone: (m: Measured) => void): Promise<Measured> {
  const m: Measured = { runs: [], churn: [], deltas: [] };
  const { runs } = m;
  for (const [services, endpoints] of opts.sizes) {
    const label = `${services}x${endpoints}`;
    const dir = await manifestDir(services, endpoints);
    // The informers' API server holds the size's objects for its runs (this process's memory, not the proxy's).
    const api = opts.informers ? await BenchApiServer.start(services, endpoints) : undefined;
    const slow = services >= opts.slowServices;
    // kube-proxy's text is rendered (and timed under nft -f) even when only slots is measured, as a
    // slots target compares against it; but not from slowServices on (minutes per nft -f there)
    // unless the kube-proxy layout was asked for.
    const texts = new Map<LayoutName, string>();
    const layouts = new Set<LayoutName>(opts.layouts);
    if (!slow) layouts.add('kube-proxy');
    for (const layout of layouts) texts.set(layout, renderText(dir, layout, label));
    for (let run = 0; run < opts.runs; run++) {
      const steps: Step[] = [{ kind: 'node' }, { kind: 'reads' }];
      for (const layout of opts.layouts) steps.push({ kind: 'proxy', layout }, { kind: 'floor', layout }, ...(api ? ([{ kind: 'live manifests', layout }, { kind: 'live informers', layout }] as const) : []));
      for (const layout of texts.keys()) steps.push({ kind: 'nft', layout });
      // kube-proxy's layout at 20k services and more takes minutes per run: fewer repetitions.
      const todo = steps.filter((s) => !(slow && 'layout' in s && s.layout === 'kube-proxy' && run >= opts.slowRuns));
      for (const step of rotation(todo, run)) {
        if (step.kind === 'node') runs.push(await nodeStartRun(services, endpoints, run));
        else if (step.kind === 'reads') runs.push(await readRun(dir, services, endpoints, run));
        else if (step.kind === 'proxy') runs.push(...(await proxyRuns(dir, step.layout, services, endpoints, run)));
        else if (step.kind === 'live manifests') runs.push(await firstSyncRun(step.kind, dir, step.layout, services, endpoints, run));
        else if (step.kind === 'live informers') runs.push(await firstSyncRun(step.kind, api!.kubeconfig, step.layout, services, endpoints, run));
        else if (step.kind === 'nft') runs.push(await nftRun(texts.get(step.layout)!, step.layout, services, endpoints, run));
        else runs.push(await floorRun(dir, step.layout, services, endpoints, run));
        for (const r of runs.slice(step.kind === 'proxy' ? -2 : -1)) {
          log(`  ${label} run ${run + 1}/${opts.runs} ${r.side} ${r.layout}: ${r.wall.toFixed(3)} s wall, ${r.user.toFixed(2)} user, ${r.sys.toFixed(2)} sys, ${r.rssMB.toFixed(0)} MB${r.operations !== undefined ? `, ${r.operations} ops` : ''}${r.commitMs !== undefined ? `, kernel ${(r.commitMs / 1000).toFixed(3)} s` : ''}`);
        }
      }
    }
    // 100k x 5 is over 100 MB of JSON: not kept longer than its size's runs.
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
    for (const t of texts.values()) rmSync(t, { force: true });
    sizeDone(m);
  }
  const [services, endpoints] = opts.churnSize;
  if (opts.churnSeconds > 0) {
    const o = { services, endpoints, seconds: opts.churnSeconds, servicesPerTick: opts.churnServices, intervalMs: opts.churnIntervalMs, sampleMs: opts.churnSampleMs };
    for (const layout of opts.layouts) {
      for (const source of opts.churnSources) {
        m.churn.push(await churnRun(source, layout, o, log));
        sizeDone(m);
      }
    }
  }
  if (opts.deltaChanges > 0) {
    for (const layout of opts.layouts) {
      m.deltas.push(await deltaRun(layout, services, endpoints, opts.deltaChanges, log));
      sizeDone(m);
    }
  }
  return m;
}

interface Saved {
  /** The command line the runs were measured with. */
  argv?: string[];
  machine: MachineInfo;
  options: ProcessOptions;
  elapsedS: number;
  runs: ProcessRun[];
  /** The churn cases (absent in runs saved before they existed). */
  churn?: ChurnResult[];
  deltas?: DeltaResult[];
}

async function main(argv: string[]): Promise<void> {
  const opts = parseProcessArgs(argv);
  let saved: Saved;
  if (opts.from) {
    saved = JSON.parse(readFileSync(opts.from, 'utf8')) as Saved;
  } else {
    if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} is missing (Debian: apt-get install time)`);
    const machine = machineInfo();
    const started = Date.now();
    process.stderr.write(`nftlink whole-process benchmark on Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs; runs=${opts.runs}\n`);
    // Saved after every size too (an hour-long run stopped halfway keeps what it measured; --from
    // reports it).
    const save = (m: Measured): void => {
      mkdirSync(dirname(resolve(opts.out)), { recursive: true });
      writeFileSync(resolve(opts.out), JSON.stringify({ argv, machine, options: opts, elapsedS: (Date.now() - started) / 1000, ...m }, null, 2) + '\n');
    };
    const m = await measure(opts, save);
    saved = { argv, machine, options: opts, elapsedS: (Date.now() - started) / 1000, ...m };
  }
  const { machine, runs } = saved;
  const churn = saved.churn ?? [];
  const deltas = saved.deltas ?? [];
  const medians = processMedians(runs);
  const ts = [...processTargets(medians), ...churnTargets(churn, deltas)];
  const out = resolve(opts.from ?? opts.out);
  if (!opts.from) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ ...saved, medians, targets: ts }, null, 2) + '\n');
  }
  const chart = resolve(opts.chart);
  mkdirSync(dirname(chart), { recursive: true });
  writeFileSync(chart, processChart(medians));

  process.stdout.write(
    `\nnftlink whole-process benchmark: Linux ${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} CPUs, ${speedText(machine)}; ${machine.date}; medians\n` +
      `command: npm run bench:process -- ${(saved.argv ?? ['(not saved)']).join(' ')}\n` +
      `wall/user/sys/RSS: the whole process, GNU time${measuredEnvText()}; nftlink runs on a copy of this node, its own executable as on a node (bench/measure.ts, measuredNode); sync: the proxy's own "synced" durations, summed over families; ` +
      `restart: proxy --once again on the table it programmed; ` +
      `live mf, live inf: a long-running proxy (not --once) cold to the end of its first sync, figures from /proc then (peak RSS: VmHWM), fed by the manifest files, and by the informers from an API server in this process (paged lists, then watches); idle MB: the live manifests proxy's RSS once it has settled after its first sync (VmRSS, after the heap compaction that follows a big sync); api cpu: the benchmark's own CPU time meanwhile (the API server serving the lists and watches, on the same cores); inf / mf: their walls; ` +
      `nft -f: the same ruleset (nftlink render); nft -f kp: kube-proxy's layout text for the same services; ` +
      `1 batch: the kernel's commit of the same ruleset as one batch, encoded beforehand; kernel: the lower of that and the proxy's sys time; floor: kernel + node -e ''; reads: node reading the same manifests with JSON.parse and nothing else (the proxy's flags), whole process; k + reads: kernel + reads, below which no Node process that reads its input before it writes can go${busyText(runs)}\n\n` +
      (medians.length ? renderProcess(medians) : '(no cold starts measured: --sizes none)') +
      (churn.length ? `\n\nChurn memory: a long-running proxy (-v 4, servers off) under churn, RSS from /proc/PID/status every sample; steady: from the end of its first sync; slope: least squares, MB per minute; anon slope: the same of the RSS less its pages of files (RssFile: the executable's pages, given back once after the first sync, come back as code runs); late slope: the RSS's over the run's second half; floor slope: the same of the RSS each heap collection the churn's growth set off left (what the proxy retains; target 7 judges it when there are at least ${FLOORS_FOR_SLOPE}); syncs: the proxy's "synced" lines, summed over families\n\n${renderChurn(churn)}` : '') +
      (deltas.length ? `\n\nChurn ratio: one endpoint replaced (through the informers), each change waited for; proxy: its sync of the change; commit: of that sync, its commit (the kernel's work for the batch, on the JS thread); nft -f: the same change's statements (the difference of nftlink render before and after) as a process of its own, on a namespace holding the same ruleset, forwards and back in turn\n\n${renderDeltas(deltas)}` : '') +
      `\n\nTargets (issue 29):\n` +
      renderTargets(ts) +
      `\n\nruns: ${out}; chart: ${chart} (measured in ${saved.elapsedS.toFixed(0)} s)\n`,
  );
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`bench:process failed: ${err instanceof Error ? err.message : String(err)}\n${err instanceof Error && err.message.includes('usage:') ? '' : PROCESS_USAGE + '\n'}`);
  // Exit through process.exit so the namespace cleanup hooks on 'exit' run.
  process.exit(1);
});
