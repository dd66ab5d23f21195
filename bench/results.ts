// The shapes of the figures, as they are written to bench-results/load.json: every run's raw
// figures, and the medians computed from them (nothing but the raw runs is needed to recompute).

import type { ProcessFigures } from './measure.js';
import { median } from './stats.js';

export type Side = 'nftlink' | 'nft';

export interface RunRecord extends ProcessFigures {
  side: Side;
  run: number;
  /** The nftlink child's own phase times (ms) and resourceUsage, when the side is nftlink. */
  phases?: Record<string, unknown>;
  resourceUsage?: { userS: number; sysS: number; maxRssMB: number };
}

export interface CaseResult {
  id: string;
  title: string;
  runs: RunRecord[];
  median: Partial<Record<Side, ProcessFigures>>;
  /** Case-specific figures (per-update latencies, in-process phase medians). */
  extra?: Record<string, number | string>;
  /** The further processes timed in the same runs (a floor, a variant): each one's figures, by run. */
  companions?: Record<string, ProcessFigures[]>;
}

/**
 * nftlink's wall over a companion's, run by run: each pair was measured moments apart, so the spread
 * shows how far the VM's drift within one benchmark moves the ratio of the medians.
 */
export function pairedWallRatios(r: CaseResult, companion: string): number[] {
  const other = r.companions?.[companion] ?? [];
  const out: number[] = [];
  other.forEach((c, run) => {
    const own = r.runs.find((x) => x.side === 'nftlink' && x.run === run);
    if (own && c.wall > 0) out.push(own.wall / c.wall);
  });
  return out;
}

export function medianFigures(runs: readonly RunRecord[], side: Side): ProcessFigures | undefined {
  const r = runs.filter((x) => x.side === side);
  if (!r.length) return undefined;
  return {
    wall: median(r.map((x) => x.wall)),
    user: median(r.map((x) => x.user)),
    sys: median(r.map((x) => x.sys)),
    rssMB: median(r.map((x) => x.rssMB)),
  };
}

/** Median of one numeric phase of the nftlink child over the runs. */
export function medianPhase(runs: readonly RunRecord[], phase: string): number {
  return median(runs.filter((r) => r.side === 'nftlink').map((r) => Number(r.phases?.[phase])).filter((x) => Number.isFinite(x)));
}
