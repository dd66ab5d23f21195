// Options of `npm run bench:process`. Defaults are issue 29's: 1k, 10k, 30k and 100k services x 5
// endpoints, 10k x 1, and the upstream workloads 5000 x 50 and 45000 x 1; both layouts; medians of
// 3 runs. --quick is a smoke run for CI: one run of 1k x 5 and 3k x 5.

import { LAYOUT_NAMES, type LayoutName } from '../../src/proxy/layout/index.js';
import { intValue, layoutsValue, sizesValue } from '../flag-values.js';

export interface ProcessOptions {
  runs: number;
  /**
   * Runs of the kube-proxy layout from `slowServices` services on (minutes per `nft -f` there; 0:
   * none, as at 100k, where one `nft -f` of kube-proxy's text takes tens of minutes).
   */
  slowRuns: number;
  slowServices: number;
  /** [services, endpoints] pairs. */
  sizes: [number, number][];
  layouts: LayoutName[];
  out: string;
  chart: string;
  quick: boolean;
  /** Measure nothing: print the report and draw the chart of a saved run (its JSON). */
  from?: string;
  /** Also `proxy --once` through the informers, from an API server in this process (issue 29 target 5). */
  informers: boolean;
  /** Churn memory (target 7): seconds of churn per source and layout (0: not measured). */
  churnSeconds: number;
  /** The size churn and the churn ratio run at. */
  churnSize: [number, number];
  /** Services changed per tick, and the tick, ms. */
  churnServices: number;
  churnIntervalMs: number;
  /** How often the proxy's RSS is sampled, ms. */
  churnSampleMs: number;
  churnSources: ChurnSource[];
  /** Churn ratio (target 8): one-endpoint changes timed on each side (0: not measured). */
  deltaChanges: number;
}

export type ChurnSource = 'manifests' | 'informers';
const CHURN_SOURCES: readonly ChurnSource[] = ['manifests', 'informers'];

export const PROCESS_USAGE = `usage: npm run bench:process -- [--runs N] [--slow-runs N] [--slow-services N]
                                [--sizes 1000x5,10000x5,30000x5,100000x5,10000x1,5000x50,45000x1|none]
                                [--layouts slots,kube-proxy] [--out FILE] [--quick]
                                [--chart FILE (default: docs/bench/process.svg; with --sizes, --out's name .svg)]
                                [--from FILE (report and chart of a saved run; measures nothing)]
                                [--informers (also proxy --once through the informers)]
                                [--churn-seconds S (churn memory: a long-running proxy under churn; 0: off)]
                                [--churn-size 10000x5] [--churn-services 50] [--churn-interval-ms 200]
                                [--churn-sample-ms 5000] [--churn-sources manifests,informers]
                                [--delta-changes N (churn ratio: N one-endpoint changes; 0: off)]`;

export const DEFAULT_SIZES: [number, number][] = [
  [1000, 5],
  [10_000, 5],
  [30_000, 5],
  [100_000, 5],
  [10_000, 1],
  [5000, 50],
  [45_000, 1],
];

export function parseSizes(v: string): [number, number][] {
  return sizesValue(v, PROCESS_USAGE);
}

export function parseProcessArgs(argv: readonly string[]): ProcessOptions {
  const quick = argv.includes('--quick');
  const o: ProcessOptions = {
    runs: quick ? 1 : 3,
    slowRuns: 1,
    slowServices: 20_000,
    sizes: quick ? [[1000, 5], [3000, 5]] : DEFAULT_SIZES.map((s) => [...s] as [number, number]),
    layouts: [...LAYOUT_NAMES],
    out: 'bench-results/process.json',
    // A quick run's chart stays beside its JSON: docs/bench/ holds the full run's (see below).
    chart: quick ? 'bench-results/process.svg' : 'docs/bench/process.svg',
    quick,
    informers: false,
    churnSeconds: 0,
    churnSize: [10_000, 5],
    churnServices: 50,
    churnIntervalMs: 200,
    churnSampleMs: 5000,
    churnSources: [...CHURN_SOURCES],
    deltaChanges: 0,
  };
  const int = (flag: string, v: string | undefined, min: number): number => intValue(flag, v, min, PROCESS_USAGE);
  let chartGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    switch (a) {
      case '--quick':
        continue;
      case '--informers':
        o.informers = true;
        continue;
      case '--churn-seconds':
        o.churnSeconds = int(a, v, 0);
        break;
      case '--churn-size': {
        const sizes = parseSizes(v ?? '');
        if (sizes.length !== 1) throw new Error(`--churn-size takes one SERVICESxENDPOINTS\n${PROCESS_USAGE}`);
        o.churnSize = sizes[0]!;
        break;
      }
      case '--churn-services':
        o.churnServices = int(a, v, 1);
        break;
      case '--churn-interval-ms':
        o.churnIntervalMs = int(a, v, 1);
        break;
      case '--churn-sample-ms':
        o.churnSampleMs = int(a, v, 100);
        break;
      case '--churn-sources':
        o.churnSources = (v ?? '').split(',').map((x) => {
          if (!CHURN_SOURCES.includes(x as ChurnSource)) throw new Error(`--churn-sources: unknown source "${x}" (${CHURN_SOURCES.join(', ')})\n${PROCESS_USAGE}`);
          return x as ChurnSource;
        });
        break;
      case '--delta-changes':
        o.deltaChanges = int(a, v, 0);
        break;
      case '--runs':
        o.runs = int(a, v, 1);
        break;
      case '--slow-runs':
        o.slowRuns = int(a, v, 0);
        break;
      case '--slow-services':
        o.slowServices = int(a, v, 1);
        break;
      case '--sizes':
        // none: only the churn cases.
        o.sizes = v === 'none' ? [] : parseSizes(v ?? '');
        break;
      case '--layouts':
        o.layouts = layoutsValue(v, PROCESS_USAGE);
        break;
      case '--out':
        o.out = v ?? o.out;
        break;
      case '--chart':
        o.chart = v ?? o.chart;
        chartGiven = true;
        break;
      case '--from':
        if (!v) throw new Error(`--from needs the JSON file of a saved run\n${PROCESS_USAGE}`);
        o.from = v;
        break;
      case '-h':
      case '--help':
        process.stdout.write(PROCESS_USAGE + '\n');
        process.exit(0);
      // falls through (exit does not return)
      default:
        throw new Error(`unknown option ${a}\n${PROCESS_USAGE}`);
    }
    i++;
  }
  // A run of other sizes than the full run's draws its chart beside its JSON, not over docs/bench/'s.
  if (!chartGiven && argv.includes('--sizes')) o.chart = o.out.replace(/\.json$/, '') + '.svg';
  return o;
}
