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
}

export const PROCESS_USAGE = `usage: npm run bench:process -- [--runs N] [--slow-runs N] [--slow-services N]
                                [--sizes 1000x5,10000x5,30000x5,100000x5,10000x1,5000x50,45000x1]
                                [--layouts slots,kube-proxy] [--out FILE] [--chart FILE] [--quick]
                                [--from FILE (report and chart of a saved run; measures nothing)]`;

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
    // A quick run's chart stays beside its JSON: docs/bench/ holds the full run's.
    chart: quick ? 'bench-results/process.svg' : 'docs/bench/process.svg',
    quick,
  };
  const int = (flag: string, v: string | undefined, min: number): number => intValue(flag, v, min, PROCESS_USAGE);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    switch (a) {
      case '--quick':
        continue;
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
        o.sizes = parseSizes(v ?? '');
        break;
      case '--layouts':
        o.layouts = layoutsValue(v, PROCESS_USAGE);
        break;
      case '--out':
        o.out = v ?? o.out;
        break;
      case '--chart':
        o.chart = v ?? o.chart;
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
  return o;
}
