// The load benchmark's chart (docs/bench/load.svg): each case's median wall time, nftlink against
// `nft -f` and against the floor where the case has one, on one log axis (from a 0.1 ms update to
// a 30 s load).

import type { CaseResult } from './results.js';
import { barChart, type BarGroup } from './svg-chart.js';

const SERIES = [{ name: 'nftlink' }, { name: 'nft -f' }, { name: 'floor (node, addon, kernel)' }];

/** 0.104 ms, 20.1 ms, 0.439 s, 16.5 s. */
export function formatSeconds(s: number): string {
  if (s < 0.1) return `${Number((s * 1000).toPrecision(3))} ms`;
  if (s < 10) return `${s.toFixed(3)} s`;
  return `${s.toFixed(1)} s`;
}

const num = (v: number | string | undefined): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function loadChart(results: readonly CaseResult[], title: string): string {
  const groups: BarGroup[] = [];
  for (const r of results) {
    const e = r.extra ?? {};
    if (r.id === 'c') {
      const ms = (k: string): number | undefined => (num(e[k]) === undefined ? undefined : num(e[k])! / 1000);
      groups.push({ label: '(c) one update', values: [ms('nftlinkMedianMs'), ms('nftMedianMs'), undefined] });
      continue;
    }
    groups.push({ label: `(${r.id})`, values: [r.median.nftlink?.wall, r.median.nft?.wall, num(e.floorWallS)] });
    if (r.id === 'a' && num(e.sizedWallS) !== undefined) {
      groups.push({ label: '(a) sized map', values: [num(e.sizedWallS), undefined, num(e.sizedFloorWallS)] });
    }
  }
  return barChart({ title, valueLabel: 'seconds, median wall (log scale)', series: SERIES, groups, log: true, formatValue: formatSeconds });
}
