// The readable side of `npm run bench`: medians per case, the ratios measured in the same run, issue
// 5's targets (each PASS or MISS on the median it names), and the chart of full-sync time against
// the number of services.

import type { LayoutName } from '../../src/proxy/layout/index.js';
import { median, percentile, ratio } from '../stats.js';
import { lineChart } from '../svg-chart.js';
import type { ChurnRecord, FullRun, RestartRecord } from './cases.js';

export interface FullMedian {
  layout: LayoutName;
  services: number;
  endpoints: number;
  runs: number;
  netlink?: { sync: number; settle: number; wall: number; user: number; sys: number; rssMB: number; operations: number };
  nft?: { wall: number; user: number; sys: number; rssMB: number };
}

export interface TargetResult {
  target: string;
  value: string;
  pass: boolean;
}

export function fullMedians(runs: readonly FullRun[]): FullMedian[] {
  const keys = [...new Set(runs.map((r) => `${r.layout}|${r.services}|${r.endpoints}`))];
  return keys.map((k) => {
    const [layout, s, e] = k.split('|') as [LayoutName, string, string];
    const mine = runs.filter((r) => r.layout === layout && r.services === Number(s) && r.endpoints === Number(e));
    const nl = mine.filter((r) => r.side === 'netlink');
    const nf = mine.filter((r) => r.side === 'nft -f');
    const m = (xs: FullRun[], f: (r: FullRun) => number): number => median(xs.map(f));
    const out: FullMedian = { layout, services: Number(s), endpoints: Number(e), runs: Math.max(nl.length, nf.length) };
    if (nl.length) out.netlink = { sync: m(nl, (r) => r.sync!), settle: m(nl, (r) => r.settle ?? 0), wall: m(nl, (r) => r.wall), user: m(nl, (r) => r.user), sys: m(nl, (r) => r.sys), rssMB: m(nl, (r) => r.rssMB), operations: m(nl, (r) => r.operations!) };
    if (nf.length) out.nft = { wall: m(nf, (r) => r.wall), user: m(nf, (r) => r.user), sys: m(nf, (r) => r.sys), rssMB: m(nf, (r) => r.rssMB) };
    return out;
  });
}

export interface ChurnMedian {
  layout: LayoutName;
  kind: string;
  count: number;
  repeats: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  operations: number;
}

export function churnMedians(records: readonly ChurnRecord[]): ChurnMedian[] {
  return records.map((c) => ({
    layout: c.layout,
    kind: c.kind,
    count: c.count,
    repeats: c.syncMs.length,
    p50Ms: median(c.syncMs),
    p90Ms: percentile(c.syncMs, 90),
    maxMs: Math.max(...c.syncMs),
    operations: median(c.operations),
  }));
}

/** Text table: the first two columns left-aligned, numbers right-aligned. */
export function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd()).join('\n');
}
export const f = (x: number | undefined, d: number): string => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));

export function renderFull(ms: readonly FullMedian[]): string {
  const rows = [['services', 'layout', 'runs', 'sync s', 'settle s', 'wall s', 'user', 'sys', 'RSS MB', 'ops', 'nft -f s', 'user', 'sys', 'RSS MB', 'nft -f / wall']];
  for (const m of ms) {
    rows.push([
      `${m.services}x${m.endpoints}`,
      m.layout,
      String(m.runs),
      f(m.netlink?.sync, 3),
      f(m.netlink?.settle, 3),
      f(m.netlink?.wall, 3),
      f(m.netlink?.user, 2),
      f(m.netlink?.sys, 2),
      f(m.netlink?.rssMB, 0),
      f(m.netlink?.operations, 0),
      f(m.nft?.wall, 3),
      f(m.nft?.user, 2),
      f(m.nft?.sys, 2),
      f(m.nft?.rssMB, 0),
      m.netlink && m.nft ? `${ratio(m.nft.wall, m.netlink.wall).toFixed(2)}x` : '-',
    ]);
  }
  return pad(rows);
}

export function renderChurn(cs: readonly ChurnMedian[]): string {
  const rows = [['change', 'layout', 'services', 'repeats', 'p50 ms', 'p90 ms', 'max ms', 'ops']];
  for (const c of cs) rows.push([c.kind, c.layout, String(c.count), String(c.repeats), f(c.p50Ms, 2), f(c.p90Ms, 2), f(c.maxMs, 2), f(c.operations, 0)]);
  return pad(rows);
}

export function renderRestart(rs: readonly RestartRecord[]): string {
  const layouts = [...new Set(rs.map((r) => r.layout))];
  const rows = [['restart', 'layout', 'runs', 'read-back + diff s', 'ops written', 'peak RSS MB']];
  for (const l of layouts) {
    const mine = rs.filter((r) => r.layout === l);
    rows.push([
      `${mine[0]!.services}x${mine[0]!.endpoints}`,
      l,
      String(mine.length),
      f(median(mine.map((r) => r.sync)), 3),
      String(Math.max(...mine.map((r) => r.operations))),
      f(median(mine.map((r) => r.rssMB)), 0),
    ]);
  }
  return pad(rows);
}

export function targets(full: readonly FullMedian[], churns: readonly ChurnMedian[], restarts: readonly RestartRecord[]): TargetResult[] {
  const out: TargetResult[] = [];
  // The churn and restart targets are set on a 10k table; a --quick run has a smaller one.
  const on10k = restarts.every((r) => r.services === 10_000) && restarts.length > 0;
  const find = (layout: LayoutName, services: number, endpoints = 5): FullMedian | undefined => full.find((m) => m.layout === layout && m.services === services && m.endpoints === endpoints);
  const s10 = find('slots', 10_000);
  const s30 = find('slots', 30_000);
  const k10 = find('kube-proxy', 10_000);
  if (s10?.netlink) out.push({ target: 'slots 10k x 5 full sync <= 0.5 s', value: `${f(s10.netlink.sync, 3)} s (+${f(s10.netlink.settle, 3)} s keying after it; process wall ${f(s10.netlink.wall, 3)} s)`, pass: s10.netlink.sync <= 0.5 });
  if (s30?.netlink) out.push({ target: 'slots 30k x 5 full sync <= 1.5 s', value: `${f(s30.netlink.sync, 3)} s (+${f(s30.netlink.settle, 3)} s keying after it; process wall ${f(s30.netlink.wall, 3)} s)`, pass: s30.netlink.sync <= 1.5 });
  if (k10?.netlink && k10.nft) {
    const r = ratio(k10.nft.wall, k10.netlink.wall);
    out.push({ target: 'kube-proxy layout 10k: netlink >= 3x faster than nft -f (process walls)', value: `${f(k10.nft.wall, 2)} / ${f(k10.netlink.wall, 2)} = ${r.toFixed(2)}x`, pass: r >= 3 });
  }
  const churn = (kind: string, count: number): ChurnMedian | undefined => churns.find((c) => c.layout === 'slots' && c.kind === kind && c.count === count);
  const r1 = churn('replace', 1);
  if (r1 && on10k) out.push({ target: 'slots: one endpoint replaced at 10k, sync p50 <= 2 ms', value: `${f(r1.p50Ms, 2)} ms`, pass: r1.p50Ms <= 2 });
  // Every kind of change counts: the slowest kind's p50 is the figure.
  const r100 = churns.filter((c) => c.layout === 'slots' && c.count === 100).sort((a, b) => b.p50Ms - a.p50Ms)[0];
  if (r100 && on10k) out.push({ target: 'slots: 100 services changed at 10k, sync p50 <= 20 ms (slowest kind)', value: `${f(r100.p50Ms, 2)} ms (${r100.kind})`, pass: r100.p50Ms <= 20 });
  const rs = restarts.filter((r) => r.layout === 'slots');
  if (rs.length && on10k) {
    const t = median(rs.map((r) => r.sync));
    const ops = Math.max(...rs.map((r) => r.operations));
    out.push({ target: 'slots restart at 10k: read-back + zero diff <= 1 s, nothing written', value: `${f(t, 3)} s, ${ops} ops`, pass: t <= 1 && ops === 0 });
  }
  if (s10?.netlink) out.push({ target: 'proxy RSS at 10k <= 150 MB', value: `${f(s10.netlink.rssMB, 0)} MB`, pass: s10.netlink.rssMB <= 150 });
  if (s30?.netlink) out.push({ target: 'proxy RSS at 30k <= 350 MB', value: `${f(s30.netlink.rssMB, 0)} MB`, pass: s30.netlink.rssMB <= 350 });
  return out;
}

export function renderTargets(ts: readonly TargetResult[]): string {
  return pad([['result', 'target', 'value'], ...ts.map((t) => [t.pass ? 'PASS' : 'MISS', t.target, t.value])]);
}

/** Full-sync time against services (x endpoints = 5), both axes log: linear growth is a straight line of slope 1. */
export function scaleChart(ms: readonly FullMedian[]): string {
  const five = ms.filter((m) => m.endpoints === 5);
  const layouts = [...new Set(five.map((m) => m.layout))];
  const series = layouts.flatMap((l) => {
    const mine = five.filter((m) => m.layout === l);
    return [
      { name: `${l}: nftlink sync (netlink)`, points: mine.filter((m) => m.netlink).map((m) => ({ x: m.services, y: m.netlink!.sync })) },
      { name: `${l}: nft -f of the same text`, dashed: true, points: mine.filter((m) => m.nft).map((m) => ({ x: m.services, y: m.nft!.wall })) },
    ];
  });
  return lineChart({ title: 'Full sync, services x 5 endpoints (medians)', xLabel: 'services', yLabel: 'seconds', xLog: true, yLog: true, series });
}
