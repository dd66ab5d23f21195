// npm run reliability's report: one row per figure (scenario, figure, value, goal, met), and the
// chart of the proxy process over time (the soak's samples, else the churn's).

import { lineChart } from '../svg-chart.js';
import type { ChaosResult } from './chaos.js';
import type { ChurnResult, Sample } from './churn.js';
import type { Trend } from './figures.js';
import type { HostileResult } from './hostile.js';

export interface Row {
  scenario: string;
  figure: string;
  value: string;
  goal: string;
  /** undefined: a figure with no goal. */
  met?: boolean;
}

const fixed = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const trendText = (t: Trend, unit: string): string => `${fixed(t.slopePerHour, 2)} ± ${fixed(t.ci95PerHour, 2)} ${unit}/h (n=${t.n})`;

/** `judgeSlope`: the RSS slope has the goal 0 (the soak; a one-minute run is too short to tell). */
export function churnRows(name: string, r: ChurnResult, judgeSlope: boolean): Row[] {
  const rows: Row[] = [
    { scenario: name, figure: 'services / cold start to stable services answering', value: `${r.services} / ${r.coldStartMs} ms`, goal: '' },
    { scenario: name, figure: 'slice changes (rate achieved)', value: `${r.changes} in ${fixed(r.churnMs / 1000)} s (${fixed(r.rate)}/s)`, goal: '' },
    { scenario: name, figure: 'failed connections, stable ClusterIP + NodePort', value: `${r.failedStable} of ${r.targets.filter((t) => t.kind !== 'churned').reduce((n, t) => n + t.ok + t.failed, 0)}`, goal: '0', met: r.failedStable === 0 },
    { scenario: name, figure: 'failed connections, churned (always >= 1 ready endpoint)', value: `${r.failedChurned} of ${r.targets.filter((t) => t.kind === 'churned').reduce((n, t) => n + t.ok + t.failed, 0)}`, goal: '0', met: r.failedChurned === 0 },
    { scenario: name, figure: 'network programming latency p50 / p99 (histogram)', value: `${fixed(r.latency.p50s, 2)} s / ${fixed(r.latency.p99s, 2)} s (${r.latency.observations} obs.)`, goal: '' },
    { scenario: name, figure: 'proxy CPU, mean of samples', value: `${fixed(r.cpuPercentMean)}% of a core`, goal: '' },
    { scenario: name, figure: 'proxy RSS min / max', value: `${fixed(Math.min(...r.samples.map((s) => s.rssMB)), 0)} / ${fixed(Math.max(...r.samples.map((s) => s.rssMB)), 0)} MB`, goal: '' },
    { scenario: name, figure: 'RSS slope after the first fifth (OLS, 95% CI)', value: trendText(r.trends.rssMB, 'MB'), ...(judgeSlope ? { goal: 'CI contains 0', met: r.trends.rssMB.indistinguishableFromZero } : { goal: '' }) },
    { scenario: name, figure: 'fds slope after the first fifth (OLS, 95% CI)', value: `${trendText(r.trends.fds, 'fds')}, ${Math.min(...r.samples.map((s) => s.fds))}-${Math.max(...r.samples.map((s) => s.fds))}`, goal: '' },
  ];
  if (r.trends.elements) rows.push({ scenario: name, figure: 'ruleset elements slope after the first fifth', value: trendText(r.trends.elements, 'elements'), goal: '' });
  rows.push({ scenario: name, figure: 'kernel = clean cold start of the final objects', value: r.model.equal ? `equal at poll ${r.model.polls ?? '?'} (${r.model.convergedMs} ms)` : `differs: ${r.model.onlyKernel.length} + ${r.model.onlyColdStart.length} lines`, goal: 'equal', met: r.model.equal });
  return rows;
}

export function chaosRows(r: ChaosResult): Row[] {
  const byKind = new Map<string, number>();
  for (const t of r.trials) byKind.set(t.kind, (byKind.get(t.kind) ?? 0) + 1);
  const unequal = r.trials.filter((t) => !t.equal).length;
  const running = r.trials.filter((t) => t.kind !== 'cold');
  const failed = running.reduce((n, t) => n + t.failed, 0);
  const ms = r.trials.filter((t) => t.equal).map((t) => t.convergedMs).sort((a, b) => a - b);
  return [
    { scenario: 'chaos', figure: 'trials (services)', value: `${r.trials.length}: ${[...byKind].map(([k, n]) => `${n} ${k}`).join(', ')} (${r.services})`, goal: '>= 20', met: r.trials.length >= 20 },
    { scenario: 'chaos', figure: 'restarts equal to a clean cold start (by dump)', value: `${r.trials.length - unequal} of ${r.trials.length}`, goal: 'all', met: unequal === 0 },
    { scenario: 'chaos', figure: 'restart to equal ruleset, median / max', value: ms.length ? `${ms[ms.length >> 1]} / ${ms.at(-1)} ms` : 'n/a', goal: '' },
    { scenario: 'chaos', figure: 'failed connections to stable services across kill + restart', value: `${failed} of ${running.reduce((n, t) => n + t.attempts, 0)}`, goal: '0', met: failed === 0 },
  ];
}

export function hostileRows(r: HostileResult): Row[] {
  const worst = Math.max(...r.livez.map((a) => a.ms));
  return [
    { scenario: 'hostile', figure: 'slow connections held on healthz (+ metrics)', value: `${r.held} (+${Math.ceil(r.slowConnections / 5)})`, goal: `${r.slowConnections}`, met: r.held === r.slowConnections },
    { scenario: 'hostile', figure: '/livez while held: statuses, worst time', value: `${[...new Set(r.livez.map((a) => a.status))].join(',')}, ${fixed(worst)} ms`, goal: '200 within 1 s', met: r.livez.every((a) => a.status === 200 && a.ms < 1000) },
    { scenario: 'hostile', figure: '100 kB header (healthz, metrics)', value: `${r.oversized.healthz.statusLine.slice(9, 12)}, ${r.oversized.metrics.statusLine.slice(9, 12)}`, goal: '431', met: [r.oversized.healthz, r.oversized.metrics].every((a) => a.statusLine.includes(' 431 ')) },
    { scenario: 'hostile', figure: '4 kB of garbage (healthz, metrics)', value: `${r.garbage.healthz.statusLine.slice(9, 12)}, ${r.garbage.metrics.statusLine.slice(9, 12)}`, goal: '400', met: [r.garbage.healthz, r.garbage.metrics].every((a) => a.statusLine.includes(' 400 ')) },
    { scenario: 'hostile', figure: '64 MB body: MB the client could write', value: `${r.largeBody.healthz.bodyMB}, RSS ${fixed(r.largeBody.rssBeforeMB, 0)} -> ${fixed(r.largeBody.rssAfterMB, 0)} MB`, goal: '< 64', met: r.largeBody.healthz.bodyMB < 64 },
    { scenario: 'hostile', figure: 'proxy fds: before / held / after', value: `${r.fds.baseline} / ${r.fds.held} / ${r.fds.after}`, goal: 'after <= before', met: r.fds.after <= r.fds.baseline },
  ];
}

export function table(rows: readonly Row[]): string {
  const head = ['scenario', 'figure', 'value', 'goal', 'met'];
  const body = rows.map((r) => [r.scenario, r.figure, r.value, r.goal, r.met === undefined ? '' : r.met ? 'yes' : 'NO']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n');
}

export function processChart(title: string, samples: readonly Sample[]): string {
  const series = [
    { name: 'RSS (MB)', points: samples.map((s) => ({ x: s.t, y: s.rssMB })) },
    { name: 'CPU (% of a core)', points: samples.map((s) => ({ x: s.t, y: s.cpuPercent })) },
    { name: 'open fds', points: samples.map((s) => ({ x: s.t, y: s.fds })) },
  ];
  if (samples.some((s) => s.elements !== undefined)) series.push({ name: 'ruleset elements (thousands)', points: samples.filter((s) => s.elements !== undefined).map((s) => ({ x: s.t, y: s.elements! / 1000 })) });
  return lineChart({ title, xLabel: 'seconds since the churn started', yLabel: 'value', series });
}
