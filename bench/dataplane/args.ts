// Command-line options of `npm run bench:dataplane`.

import { MAX_SERVICES } from './services.js';
import { SHAPES, type ShapeName } from './shapes.js';

export interface DataplaneOptions {
  sizes: number[];
  /** Timed connects per (shape, size) and target kind (spread across the table, and the last service). */
  connects: number;
  shapes: ShapeName[];
  /** The connects are split into this many rounds (one probe process each); in a round the hosts take turns connect by connect. */
  rounds: number;
  /** Connects per target kind a host makes in a row before the next host's turn (1: they alternate connect by connect). */
  turn: number;
  /** Untimed connects per (shape, size) before the first round, spread across the table. */
  warmup: number;
  /** Pods, and so endpoints per service. */
  pods: number;
  out: string;
  chart: string;
}

export const USAGE = `usage: npm run bench:dataplane -- [--sizes 10,1000,10000] [--connects N] [--shapes ${SHAPES.join(',')}]
                                    [--rounds N] [--turn N] [--warmup N] [--pods N] [--out FILE] [--chart FILE]`;

function intList(name: string, v: string | undefined, min: number, max: number): number[] {
  const list = (v ?? '').split(',').map(Number);
  if (!v || list.some((n) => !Number.isInteger(n) || n < min || n > max)) throw new Error(`--${name} takes integers from ${min} to ${max}, comma-separated\n${USAGE}`);
  return list;
}

type Setter = (o: DataplaneOptions, v: string | undefined) => void;

const one = (name: string, v: string | undefined, min: number, max: number): number => intList(name, v, min, max)[0]!;

const FLAGS: Record<string, Setter> = {
  '--sizes': (o, v) => (o.sizes = [...new Set(intList('sizes', v, 1, MAX_SERVICES))].sort((x, y) => x - y)),
  '--connects': (o, v) => (o.connects = one('connects', v, 1, 1_000_000)),
  '--shapes': (o, v) => {
    const list = (v ?? '').split(',').filter(Boolean);
    if (!list.length || list.some((s) => !(SHAPES as readonly string[]).includes(s))) throw new Error(`--shapes takes a list of ${SHAPES.join(',')}\n${USAGE}`);
    o.shapes = [...new Set(list)] as ShapeName[];
  },
  '--rounds': (o, v) => (o.rounds = one('rounds', v, 1, 1000)),
  '--turn': (o, v) => (o.turn = one('turn', v, 1, 1_000_000)),
  '--warmup': (o, v) => (o.warmup = one('warmup', v, 0, 1_000_000)),
  '--pods': (o, v) => (o.pods = one('pods', v, 1, 200)),
  '--out': (o, v) => (o.out = v ?? o.out),
  '--chart': (o, v) => (o.chart = v ?? o.chart),
};

export function parseDataplaneArgs(argv: readonly string[]): DataplaneOptions {
  const o: DataplaneOptions = {
    sizes: [10, 1000, 10_000],
    connects: 2000,
    shapes: [...SHAPES],
    rounds: 20,
    turn: 10,
    warmup: 300,
    pods: 5,
    out: 'bench-results/dataplane.json',
    chart: 'docs/bench/dataplane.svg',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '-h' || flag === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    }
    const set = FLAGS[flag];
    if (!set) throw new Error(`unknown option ${flag}\n${USAGE}`);
    set(o, argv[++i]);
  }
  // Every round runs at least one connect per shape.
  o.rounds = Math.min(o.rounds, o.connects);
  return o;
}
