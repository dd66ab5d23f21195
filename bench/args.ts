// Command-line options of `npm run bench:load`. Full sizes are docs/architecture.md's (100k elements, 10k
// services x 5 endpoints); --quick is a smoke run for CI: one run, a tenth of the sizes.

import { SHAPES } from './shapes.js';

export type CaseId = 'a' | 'b' | 'c' | 'd';
export const ALL_CASES: readonly CaseId[] = ['a', 'b', 'c', 'd'];

export interface BenchOptions {
  runs: number;
  quick: boolean;
  cases: CaseId[];
  /** Case (b) shapes to run (SHAPES). */
  shapes: number[];
  elements: number;
  services: number;
  endpoints: number;
  /** Case (c): updates in the one nftlink process, and `nft -f` processes (one update each). */
  updates: number;
  nftUpdates: number;
  out: string;
  /** Where the chart goes (docs/bench/load.svg; a quick run's goes beside its JSON instead). */
  chart: string;
  /** Measure nothing: print the report and draw the chart of a saved run (its JSON). */
  from?: string;
}

const USAGE = `usage: npm run bench:load -- [--runs N] [--quick] [--cases a,b,c,d] [--shapes ${SHAPES.join(',')}]
                               [--elements N] [--services N] [--updates N] [--nft-updates N] [--out FILE]
                               [--chart FILE] [--from FILE (report and chart of a saved run; measures nothing)]`;

export function parseArgs(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const o: BenchOptions = {
    runs: quick ? 1 : 3,
    quick,
    cases: [...ALL_CASES],
    shapes: [...SHAPES],
    elements: quick ? 10_000 : 100_000,
    services: quick ? 1_000 : 10_000,
    endpoints: 5,
    updates: quick ? 50 : 200,
    nftUpdates: quick ? 5 : 20,
    out: 'bench-results/load.json',
    chart: quick ? 'bench-results/load.svg' : 'docs/bench/load.svg',
  };
  const int = (name: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} needs an integer >= ${min}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string | undefined => argv[++i];
    switch (a) {
      case '--quick':
        break;
      case '--runs':
        o.runs = int('runs', next(), 1);
        break;
      case '--cases': {
        const list = (next() ?? '').split(',').filter(Boolean);
        if (!list.length || list.some((c) => !ALL_CASES.includes(c as CaseId))) throw new Error(`--cases takes a list of a,b,c,d\n${USAGE}`);
        o.cases = list as CaseId[];
        break;
      }
      case '--shapes': {
        const list = (next() ?? '').split(',').map(Number);
        if (!list.length || list.some((s) => !(SHAPES as readonly number[]).includes(s))) throw new Error(`--shapes takes a list of ${SHAPES.join(',')}\n${USAGE}`);
        o.shapes = list;
        break;
      }
      case '--elements':
        o.elements = int('elements', next(), 1);
        break;
      case '--services':
        o.services = int('services', next(), 1);
        break;
      case '--updates':
        o.updates = int('updates', next(), 1);
        break;
      case '--nft-updates':
        o.nftUpdates = int('nft-updates', next(), 1);
        break;
      case '--out':
        o.out = next() ?? o.out;
        break;
      case '--chart':
        o.chart = next() ?? o.chart;
        break;
      case '--from': {
        const file = next();
        if (!file) throw new Error(`--from needs the JSON file of a saved run\n${USAGE}`);
        o.from = file;
        break;
      }
      case '-h':
      case '--help':
        process.stdout.write(USAGE + '\n');
        process.exit(0);
      // falls through (exit does not return)
      default:
        throw new Error(`unknown option ${a}\n${USAGE}`);
    }
  }
  if (o.updates > o.elements || o.nftUpdates > o.elements) throw new Error('--updates and --nft-updates must not exceed --elements (each update needs its own key)');
  return o;
}
