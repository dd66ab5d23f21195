// The figures of the data-plane benchmark: per (size, shape) the connect p50/p99 for both target
// kinds with the ratios measured in the same run, the target (slots flat from 10 to 10k
// services while iptables grows), what the floor control says of that growth, and the chart of p50
// and p99 against the number of services.

import { lineChart, type ChartSeries } from '../svg-chart.js';
import { median, percentile, ratio } from '../stats.js';
import type { Samples } from './measure.js';
import { SHAPE_TITLE, type ShapeName } from './shapes.js';

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ShapeResult {
  shape: ShapeName;
  services: number;
  loadS: number;
  loaded: string;
  spread: Summary;
  last: Summary;
  errors: number;
}

export function summarize(xs: readonly number[]): Summary {
  return { n: xs.length, p50: median(xs), p99: percentile(xs, 99), max: xs.length ? xs.reduce((m, x) => Math.max(m, x), -Infinity) : NaN };
}

export function shapeResult(shape: ShapeName, services: number, loaded: { loadS: number; size: string }, s: Samples): ShapeResult {
  return { shape, services, loadS: loaded.loadS, loaded: loaded.size, spread: summarize(s.spread), last: summarize(s.last), errors: s.errors.length };
}

const us = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-');
const x2 = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '-');

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** The printed table: one row per (size, shape); ratios against slots at that size and against the shape's own smallest size. */
export function renderTable(results: readonly ShapeResult[]): string {
  const rows = [['services', 'shape', 'load s', 'spread p50 µs', 'p99 µs', 'last p50 µs', 'p99 µs', 'p50 / slots', 'p50 / own smallest', 'failed']];
  const smallest = Math.min(...results.map((r) => r.services));
  for (const r of results) {
    const slots = results.find((x) => x.shape === 'slots' && x.services === r.services);
    const base = results.find((x) => x.shape === r.shape && x.services === smallest);
    rows.push([
      r.services.toLocaleString('en-US'),
      SHAPE_TITLE[r.shape],
      r.loadS.toFixed(2),
      us(r.spread.p50),
      us(r.spread.p99),
      us(r.last.p50),
      us(r.last.p99),
      slots ? x2(ratio(r.spread.p50, slots.spread.p50)) : '-',
      base ? x2(ratio(r.spread.p50, base.spread.p50)) : '-',
      String(r.errors),
    ]);
  }
  return pad(rows) + '\n';
}

export interface TargetResult {
  target: string;
  pass: boolean;
  detail: string;
}

/** The smallest and the largest size measured, and a shape's result at a size. */
function span(results: readonly ShapeResult[]): { lo: number; hi: number; get(shape: ShapeName, n: number): ShapeResult | undefined } {
  const sizes = [...new Set(results.map((r) => r.services))].sort((a, b) => a - b);
  return { lo: sizes[0]!, hi: sizes[sizes.length - 1]!, get: (shape, n) => results.find((r) => r.shape === shape && r.services === n) };
}

/** `+1.5 µs`, `-3.2%`. */
const signed = (x: number, unit: string): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}${unit}`;

/** The target, between the smallest and the largest size measured. */
export function targets(results: readonly ShapeResult[]): TargetResult[] {
  const { lo, hi, get } = span(results);
  if (lo === hi) return [];
  const out: TargetResult[] = [];
  const growth = (shape: ShapeName, kind: 'spread' | 'last'): { a: number; b: number; g: number } | undefined => {
    const a = get(shape, lo)?.[kind].p50;
    const b = get(shape, hi)?.[kind].p50;
    return a === undefined || b === undefined ? undefined : { a, b, g: ratio(b, a) - 1 };
  };
  const pct = (g: number): string => signed(g * 100, '%');
  for (const kind of ['spread', 'last'] as const) {
    const s = growth('slots', kind);
    if (s) out.push({ target: `slots p50 (${kind}) at ${hi} services within 10% of its p50 at ${lo}`, pass: Math.abs(s.g) <= 0.1, detail: `${us(s.a)} -> ${us(s.b)} µs (${pct(s.g)})` });
  }
  for (const kind of ['spread', 'last'] as const) {
    const i = growth('iptables', kind);
    if (i) out.push({ target: `iptables p50 (${kind}) grows from ${lo} to ${hi} services (by more than 10%)`, pass: i.g > 0.1, detail: `${us(i.a)} -> ${us(i.b)} µs (${pct(i.g)})` });
  }
  return out;
}

/**
 * What the control says (floor-shape.ts): how much of each shape's growth from the smallest to the
 * largest size the floor shows too, with no per-service state at all. Not a target: the part of a
 * shape's growth that is its own.
 */
export function controlLines(results: readonly ShapeResult[]): string[] {
  const { lo, hi, get } = span(results);
  const floorLo = get('floor', lo);
  const floorHi = get('floor', hi);
  if (lo === hi || !floorLo || !floorHi) return [];
  const out: string[] = [];
  for (const kind of ['spread', 'last'] as const) {
    const f = floorHi[kind].p50 - floorLo[kind].p50;
    out.push(`floor (${kind}): ${us(floorLo[kind].p50)} -> ${us(floorHi[kind].p50)} µs (${signed((f / floorLo[kind].p50) * 100, '%')}) from ${lo} to ${hi} destinations, with nothing per service`);
    for (const shape of ['slots', 'kube-proxy'] as const) {
      const a = get(shape, lo);
      const b = get(shape, hi);
      if (!a || !b) continue;
      const own = b[kind].p50 - a[kind].p50 - f;
      out.push(`  ${SHAPE_TITLE[shape]} (${kind}) beyond the floor's growth: ${signed(own, ' µs')} (${signed((own / a[kind].p50) * 100, '%')} of its p50 at ${lo})`);
    }
  }
  return out;
}

export function renderTargets(list: readonly TargetResult[]): string {
  return list.map((t) => `${t.pass ? 'PASS' : 'MISS'}  ${t.target}: ${t.detail}`).join('\n') + '\n';
}

const COLORS: Record<ShapeName, string> = { slots: '#2ca02c', 'kube-proxy': '#1f77b4', iptables: '#d62728', floor: '#7f7f7f' };

/** Connect p50 (solid) and p99 (dashed) of the spread targets against the number of services. */
export function renderChart(results: readonly ShapeResult[], pods: number): string {
  const shapes = [...new Set(results.map((r) => r.shape))];
  const series: ChartSeries[] = [];
  for (const q of ['p50', 'p99'] as const) {
    for (const shape of shapes) {
      series.push({
        name: `${SHAPE_TITLE[shape]} ${q}`,
        color: COLORS[shape],
        dashed: q === 'p99',
        points: results.filter((r) => r.shape === shape).map((r) => ({ x: r.services, y: r.spread[q] })),
      });
    }
  }
  return lineChart({
    title: `TCP connect to a ClusterIP (${pods} endpoints per service, spread targets)`,
    xLabel: 'ClusterIP services in the ruleset',
    yLabel: 'connect latency (µs)',
    xLog: true,
    series,
  });
}
