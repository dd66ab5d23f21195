// bench:repair's flags.

import { LAYOUT_NAMES, type LayoutName } from '../../src/proxy/layout/index.js';
import { intValue, layoutsValue } from '../flag-values.js';

export interface RepairOptions {
  reps: number;
  layouts: LayoutName[];
  /** Each probe target gets a new connection this often. */
  intervalMs: number;
  /**
   * Between repetitions: the proxy allows 5 repairs in 10 s before it backs off (doubling delays,
   * src/proxy/sync/repair-backoff.ts); 2.5 s apart stays under that, so every figure is an
   * unthrottled repair.
   */
  spacingMs: number;
  out: string;
  /**
   * Leave the node's conntrack entries towards the ClusterIP between repetitions. By default they
   * are deleted before each one: a SYN that arrived during an earlier outage leaves an entry that
   * was never DNATed (SYN_SENT, 120 s), and a later connection from the same client port matches it
   * and times out whatever the rules say, a failure of the earlier outage and not of this repair.
   */
  keepConntrack: boolean;
  /**
   * Beside the two-pod setup, the same tampering on a table of this many more services (0: not),
   * each with `endpoints` endpoints: the cold start's own time against the repairs' (issue 32: a
   * flushed ruleset repaired within 2x the cold start, one deleted element by writing only it).
   */
  size: number;
  endpoints: number;
  /** Repetitions of each tamper kind at `size` (a flushed ruleset costs a cold start each). */
  sizeReps: number;
  /** The fight: another writer deletes the same element every 100 ms for this long (0: no fight). */
  fightS: number;
  /** Only the tamper kinds whose name contains one of these (default: every kind). */
  kinds: string[] | undefined;
  /** Skip the two-pod setup (with --size: only the big table). */
  sizeOnly: boolean;
}

export const REPAIR_USAGE =
  'usage: npm run bench:repair -- [--reps N] [--layouts slots,kube-proxy] [--interval-ms N] [--spacing-ms N] [--out FILE] [--keep-conntrack] [--size SERVICES] [--endpoints N] [--size-reps N] [--size-only] [--fight-s N] [--kinds TEXT,...]';

export function parseRepairArgs(argv: readonly string[]): RepairOptions {
  const o: RepairOptions = { reps: 10, layouts: [...LAYOUT_NAMES], intervalMs: 10, spacingMs: 2500, out: 'bench-results/repair.json', keepConntrack: false, size: 0, endpoints: 5, sizeReps: 5, fightS: 10, kinds: undefined, sizeOnly: false };
  const int = (flag: string, v: string | undefined, min: number): number => intValue(flag, v, min, REPAIR_USAGE);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    switch (a) {
      case '--reps':
        o.reps = int(a, v, 1);
        i++;
        break;
      case '--interval-ms':
        o.intervalMs = int(a, v, 1);
        i++;
        break;
      case '--size':
        o.size = int(a, v, 0);
        i++;
        break;
      case '--endpoints':
        o.endpoints = int(a, v, 1);
        i++;
        break;
      case '--size-reps':
        o.sizeReps = int(a, v, 1);
        i++;
        break;
      case '--kinds':
        if (!v) throw new Error(`--kinds needs TEXT,...\n${REPAIR_USAGE}`);
        o.kinds = v.split(',');
        i++;
        break;
      case '--size-only':
        o.sizeOnly = true;
        break;
      case '--fight-s':
        o.fightS = int(a, v, 0);
        i++;
        break;
      case '--spacing-ms':
        o.spacingMs = int(a, v, 0);
        i++;
        break;
      case '--layouts':
        o.layouts = layoutsValue(v, REPAIR_USAGE);
        i++;
        break;
      case '--keep-conntrack':
        o.keepConntrack = true;
        break;
      case '--out':
        if (!v) throw new Error(`--out needs a file\n${REPAIR_USAGE}`);
        o.out = v;
        i++;
        break;
      default:
        throw new Error(`unknown flag ${a}\n${REPAIR_USAGE}`);
    }
  }
  return o;
}
