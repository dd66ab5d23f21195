// Options of `npm run bench`. Defaults are issue 5's: 1k, 10k and 30k services x 5
// endpoints plus 10k x 1; churn of 1, 10 and 100 services on the 10k table; medians of 3 runs.
// The slowest cases (kube-proxy's layout at 30k: minutes per `nft -f`) run `slowRuns` times.

import { LAYOUT_NAMES, type LayoutName } from '../../src/proxy/layout/index.js';
import { intValue, layoutsValue, sizesValue } from '../flag-values.js';

export interface ScaleOptions {
  runs: number;
  slowRuns: number;
  /** [services, endpoints] pairs for the full-sync cases. */
  sizes: [number, number][];
  layouts: LayoutName[];
  churnServices: number;
  churnCounts: number[];
  /** Repetitions of each churn step (different services each time). */
  churnRepeats: number;
  out: string;
  chart: string;
  quick: boolean;
}

export const BENCH_USAGE = `usage: npm run bench -- [--runs N] [--slow-runs N] [--sizes 1000x5,10000x5,30000x5,10000x1]
                        [--layouts slots,kube-proxy] [--churn-services N] [--churn-counts 1,10,100]
                        [--churn-repeats N] [--out FILE] [--chart FILE] [--quick]`;

export function parseScaleArgs(argv: readonly string[]): ScaleOptions {
  const quick = argv.includes('--quick');
  const o: ScaleOptions = {
    runs: quick ? 1 : 3,
    slowRuns: 1,
    sizes: quick ? [[1000, 5], [3000, 5]] : [[1000, 5], [10_000, 5], [30_000, 5], [10_000, 1]],
    layouts: [...LAYOUT_NAMES],
    churnServices: quick ? 1000 : 10_000,
    churnCounts: [1, 10, 100],
    churnRepeats: quick ? 3 : 21,
    out: 'bench-results/scale.json',
    chart: 'docs/bench/scale.svg',
    quick,
  };
  const int = (flag: string, v: string | undefined, min: number): number => intValue(flag, v, min, BENCH_USAGE);
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
        o.slowRuns = int(a, v, 1);
        break;
      case '--sizes':
        o.sizes = sizesValue(v, BENCH_USAGE);
        break;
      case '--layouts':
        o.layouts = layoutsValue(v, BENCH_USAGE);
        break;
      case '--churn-services':
        o.churnServices = int(a, v, 100);
        break;
      case '--churn-counts':
        o.churnCounts = (v ?? '').split(',').map((s) => int(a, s, 1));
        break;
      case '--churn-repeats':
        o.churnRepeats = int(a, v, 1);
        break;
      case '--out':
        o.out = v ?? o.out;
        break;
      case '--chart':
        o.chart = v ?? o.chart;
        break;
      case '-h':
      case '--help':
        process.stdout.write(BENCH_USAGE + '\n');
        process.exit(0);
      // falls through (exit does not return)
      default:
        throw new Error(`unknown option ${a}\n${BENCH_USAGE}`);
    }
    i++;
  }
  return o;
}
