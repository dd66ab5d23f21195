// bench:repair's table: per layout and tamper kind, the order statistics of the judged figure
// (traffic recovery when the change broke traffic, else the repair commit) against issue 32's
// targets, p50 <= 100 ms and max <= 500 ms.

import { median, percentile } from '../stats.js';
import { judgedMs, type RepOutcome } from './recovery.js';

export const TARGET_P50_MS = 100;
export const TARGET_MAX_MS = 500;

export interface KindResult {
  layout: string;
  kind: string;
  reps: RepOutcome[];
}

export interface KindSummary {
  layout: string;
  kind: string;
  reps: number;
  /** What the figures are: 'traffic' (every rep broke it), 'repair' (none did), or 'mixed'. */
  measured: 'traffic' | 'repair' | 'mixed';
  p50: number;
  p90: number;
  max: number;
  /** p50 of the repair commit, for every kind (the proxy's side of the figure). */
  repairP50: number;
  /** How the proxy repaired: a full sync, a targeted one (only what was touched read back), or both. */
  repairKind: 'full' | 'targeted' | 'mixed' | 'none';
  /** p50 of the repair sync's operations and of its own duration (read, plan, commit). */
  opsP50: number;
  syncP50: number;
  failed: number;
  pass: boolean;
}

export function summarize(r: KindResult): KindSummary {
  // A rep with no figure (no recovery or no repair seen in its window) counts as infinitely slow:
  // a miss, never a hole that improves the percentiles.
  const xs = r.reps.map((o) => judgedMs(o) ?? Infinity);
  const broke = r.reps.filter((o) => o.failed > 0).length;
  const measured = broke === r.reps.length ? 'traffic' : broke === 0 ? 'repair' : 'mixed';
  const p50 = median(xs);
  const max = Math.max(...xs);
  return {
    layout: r.layout,
    kind: r.kind,
    reps: r.reps.length,
    measured,
    p50,
    p90: percentile(xs, 90),
    max,
    repairP50: median(r.reps.map((o) => o.repairMs ?? Infinity)),
    repairKind: kindOf(r.reps),
    opsP50: median(r.reps.map((o) => o.repairSync?.operations ?? NaN)),
    syncP50: median(r.reps.map((o) => o.repairSync?.durationMs ?? Infinity)),
    failed: r.reps.reduce((n, o) => n + o.failed, 0),
    pass: p50 <= TARGET_P50_MS && max <= TARGET_MAX_MS,
  };
}

function kindOf(reps: readonly RepOutcome[]): KindSummary['repairKind'] {
  const kinds = new Set(reps.flatMap((o) => (o.repairSync ? [o.repairSync.full ? 'full' : 'targeted'] : [])));
  return kinds.size === 0 ? 'none' : kinds.size === 2 ? 'mixed' : kinds.has('full') ? 'full' : 'targeted';
}

const ms = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : 'none');

export function table(rows: readonly KindSummary[]): string {
  const head = ['layout', 'tamper', 'reps', 'measured', 'p50 ms', 'p90 ms', 'max ms', 'repair p50', 'repair sync', 'ops p50', 'sync p50 ms', 'failed conns', `p50<=${TARGET_P50_MS} max<=${TARGET_MAX_MS}`];
  const body = rows.map((r) => [r.layout, r.kind, String(r.reps), r.measured, ms(r.p50), ms(r.p90), ms(r.max), ms(r.repairP50), r.repairKind, Number.isNaN(r.opsP50) ? 'none' : String(r.opsP50), ms(r.syncP50), String(r.failed), r.pass ? 'PASS' : 'MISS']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i < 2 || i === 3 || i === 8 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}
