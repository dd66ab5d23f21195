// npm run reliability's flags.

import { isLayoutName, LAYOUT_NAMES, type LayoutName } from '../../src/proxy/layout/index.js';
import { intValue } from '../flag-values.js';

export const SCENARIOS = ['churn', 'soak', 'chaos', 'hostile'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface ReliabilityOptions {
  scenarios: Scenario[];
  /** Services of the churn and soak scenarios. */
  services: number;
  /** EndpointSlice changes per second. */
  rate: number;
  churnSeconds: number;
  soakSeconds: number;
  /** Services of the chaos scenario (every trial compares a cold start of them). */
  chaosServices: number;
  trials: number;
  slowConnections: number;
  layout: LayoutName;
  minSyncPeriod: string;
  seed: number;
  out: string;
  svg: string;
}

export const RELIABILITY_USAGE = `usage: npm run reliability -- [--scenarios churn,soak,chaos,hostile] [--services N] [--rate N] [--churn-seconds N]
       [--soak-seconds N] [--chaos-services N] [--trials N] [--slow-connections N] [--layout ${LAYOUT_NAMES.join('|')}]
       [--min-sync-period D] [--seed N] [--out FILE] [--svg FILE]`;

export function parseReliabilityArgs(argv: readonly string[]): ReliabilityOptions {
  const o: ReliabilityOptions = {
    scenarios: [...SCENARIOS],
    services: 10_000,
    rate: 50,
    churnSeconds: 60,
    soakSeconds: 1800,
    chaosServices: 2000,
    trials: 20,
    slowConnections: 1000,
    layout: 'slots',
    minSyncPeriod: '1s',
    seed: 31,
    out: 'bench-results/reliability.json',
    svg: 'bench-results/reliability.svg',
  };
  const int = (flag: string, v: string | undefined, min: number): number => intValue(flag, v, min, RELIABILITY_USAGE);
  const text = (flag: string, v: string | undefined): string => {
    if (!v) throw new Error(`${flag} needs a value\n${RELIABILITY_USAGE}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    i++;
    switch (a) {
      case '--scenarios':
        o.scenarios = text(a, v).split(',').map((s) => {
          if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`--scenarios: unknown scenario "${s}" (${SCENARIOS.join(', ')})\n${RELIABILITY_USAGE}`);
          return s as Scenario;
        });
        break;
      case '--services':
        o.services = int(a, v, 8);
        break;
      case '--rate':
        o.rate = int(a, v, 1);
        break;
      case '--churn-seconds':
        o.churnSeconds = int(a, v, 1);
        break;
      case '--soak-seconds':
        o.soakSeconds = int(a, v, 10);
        break;
      case '--chaos-services':
        o.chaosServices = int(a, v, 8);
        break;
      case '--trials':
        o.trials = int(a, v, 1);
        break;
      case '--slow-connections':
        o.slowConnections = int(a, v, 1);
        break;
      case '--layout': {
        const l = text(a, v);
        if (!isLayoutName(l)) throw new Error(`--layout: unknown layout "${l}" (${LAYOUT_NAMES.join(', ')})\n${RELIABILITY_USAGE}`);
        o.layout = l;
        break;
      }
      case '--min-sync-period':
        o.minSyncPeriod = text(a, v);
        break;
      case '--seed':
        o.seed = int(a, v, 0);
        break;
      case '--out':
        o.out = text(a, v);
        break;
      case '--svg':
        o.svg = text(a, v);
        break;
      default:
        throw new Error(`unknown flag ${a}\n${RELIABILITY_USAGE}`);
    }
  }
  return o;
}
