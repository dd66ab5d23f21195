// The readable side of the results: one table of medians with the ratios measured in the same run,
// and the issue's targets, each PASS or MISS against the median it names (no rounding in its favour).

import { pairedWallRatios, type CaseResult } from './results.js';
import { median, ratio } from './stats.js';

export interface TargetResult {
  target: string;
  value: number;
  unit: string;
  limit: string;
  pass: boolean;
  /** For a floor fallback: the wall target it stands in for. */
  fallbackOf?: string;
  /** False for a fallback whose wall target was met outright: shown, but it decides nothing. */
  needed?: boolean;
  /** For a floor fallback: the lowest and highest of the run-by-run ratios (shown, not judged). */
  perRun?: { min: number; max: number };
}

const num = (x: number | undefined, digits: number): string => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/**
 * The issue's fallback where the kernel's share rules a target out: within 1.25x of that share,
 * measured as a floor process that does the case's netlink work and nothing else. Where the wall
 * target itself is met, the fallback is still printed but marked n/a.
 */
function floorTarget(r: CaseResult, wallTarget: TargetResult, floorIs: string): TargetResult | undefined {
  const floor = Number(r.extra?.floorWallS);
  if (!Number.isFinite(floor)) return undefined;
  const x = ratio(wallTarget.value, floor);
  const target = `(${r.id}) within 1.25x of its floor (${floorIs})`;
  const t: TargetResult = { target, value: x, unit: 'x floor', limit: '1.25', pass: x <= 1.25, fallbackOf: wallTarget.target, needed: !wallTarget.pass };
  const paired = pairedWallRatios(r, 'floor');
  if (paired.length) t.perRun = { min: Math.min(...paired), max: Math.max(...paired) };
  return t;
}

export function targets(results: readonly CaseResult[]): TargetResult[] {
  const out: TargetResult[] = [];
  const by = (id: string) => results.find((r) => r.id === id);
  const a = by('a');
  const al = a?.median.nftlink;
  const an = a?.median.nft;
  if (al) {
    const wall: TargetResult = { target: '(a) wall <= 0.35 s', value: al.wall, unit: 's', limit: '0.35', pass: al.wall <= 0.35 };
    out.push(wall);
    if (an) {
      const x = ratio(an.wall, al.wall);
      out.push({ target: '(a) >= 2x faster than nft -f (nft wall / nftlink wall)', value: x, unit: 'x', limit: '2', pass: x >= 2 });
    }
    const f = floorTarget(a, wall, 'the same batch encoded beforehand: node, the addon and the kernel');
    if (f) out.push(f);
    out.push({ target: '(a) peak RSS <= 120 MB', value: al.rssMB, unit: 'MB', limit: '120', pass: al.rssMB <= 120 });
  }
  for (const r of results) {
    if (r.id !== 'a' && !r.id.startsWith('b')) continue;
    const m = r.median.nftlink;
    if (!m) continue;
    const x = ratio(m.user, m.sys);
    out.push({ target: `(${r.id}) user <= 1.25 x sys`, value: x, unit: 'x sys', limit: '1.25', pass: x <= 1.25 });
    // The same, less what a process that does none of nftlink's work costs: for (a), one that only
    // makes the input (node, modules, 100k objects); for (b), one that only starts node and loads
    // the modules (the services are built with the library: nftlink's work).
    const baseline = r.id === 'a' ? { user: 'inputOnlyUserMs', sys: 'inputOnlySysMs', is: 'input only' } : { user: 'startupOnlyUserMs', sys: 'startupOnlySysMs', is: "node's start-up" };
    const baseUser = Number(r.extra?.[baseline.user]) / 1000;
    const baseSys = Number(r.extra?.[baseline.sys]) / 1000;
    if (Number.isFinite(baseUser) && Number.isFinite(baseSys)) {
      const own = ratio(m.user - baseUser, m.sys - baseSys);
      out.push({ target: `(${r.id}) nftlink's own user <= 1.25 x its sys (whole process minus ${baseline.is})`, value: own, unit: 'x sys', limit: '1.25', pass: own <= 1.25 });
    }
  }
  const c = by('c');
  if (c?.extra) {
    const v = Number(c.extra.nftlinkMedianMs);
    out.push({ target: '(c) median per update <= 1 ms', value: v, unit: 'ms', limit: '1', pass: v <= 1 });
  }
  const dCase = by('d');
  const d = dCase?.median.nftlink;
  if (d) {
    const wall: TargetResult = { target: '(d) dump (whole process) <= 0.3 s', value: d.wall, unit: 's', limit: '0.3', pass: d.wall <= 0.3 };
    out.push(wall);
    const f = floorTarget(dCase, wall, "the same dump decoding nothing: node and the kernel's share");
    if (f) out.push(f);
  }
  return out;
}

/** (a)'s load again with the map declared with a size: what the kernel's share is without hash table growth. */
function sizedMapNote(r: CaseResult): string | undefined {
  const e = r.extra ?? {};
  const [size, wall, sys, floorWall, floorSys] = ['sizedMapSize', 'sizedWallS', 'sizedSysS', 'sizedFloorWallS', 'sizedFloorSysS'].map((k) => Number(e[k]));
  if (!Number.isFinite(size) || !Number.isFinite(wall)) return undefined;
  const l = r.median.nftlink;
  return (
    `(${r.id}) the same load with the map declared \`size ${size}\` (not judged): nftlink wall ${num(wall, 3)} s, sys ${num(sys, 2)}` +
    `; its floor wall ${num(floorWall, 3)} s, sys ${num(floorSys, 2)}` +
    (l ? ` (without a size: sys ${num(l.sys, 2)}, floor sys ${num(Number(e.floorSysS), 2)}; the kernel grows its table from 4 buckets)` : '')
  );
}

/** (a)'s load in an unbound transaction: what converting the request part by part while it is encoded saves. */
function unboundNote(r: CaseResult): string | undefined {
  const wall = Number(r.extra?.unboundWallS);
  const l = r.median.nftlink;
  if (!Number.isFinite(wall) || !l) return undefined;
  const pairs = pairedWallRatios(r, 'unbound');
  return (
    `(${r.id}) the same load in an unbound transaction (the addon converts the whole request at commit; not judged): wall ${num(wall, 3)} s` +
    `; bound over unbound ${num(ratio(l.wall, wall), 3)}x` +
    (pairs.length ? `, run by run median ${num(median(pairs), 3)}x (${num(Math.min(...pairs), 2)}-${num(Math.max(...pairs), 2)})` : '')
  );
}

/**
 * The figures issue 3's targets were set by: the same workloads measured on "this kind of machine"
 * when the issue was written (docs/architecture.md, "Kernel facts": Linux 6.18, nft 1.0.6). `nft -f` of (a)'s
 * file, a C program committing (a)'s batch with libnftnl (the floor under (a): 0.025 s building,
 * 0.19 s in the kernel), `nft list` of the 100k map, and `nft -f` of shape 5's 10k services.
 */
const ISSUE_REFERENCE = { nftLoadS: 0.83, cFloorS: 0.22, nftListS: 2.2, nftShape5S: 0.9 } as const;

/**
 * How fast this run's machine ran the issue's reference workloads, against the figures the targets
 * were set by (shown, not judged). Why: the wall targets are absolute (0.35 s, 0.3 s) and this VM's
 * speed moves with the hour; a target missed on a machine that ran `nft -f` twice as slow as the
 * issue's reads differently from one missed at the issue's own speed.
 */
export function referenceNote(results: readonly CaseResult[]): string | undefined {
  const by = (id: string) => results.find((r) => r.id === id);
  const parts: string[] = [];
  const row = (what: string, measured: number | undefined, reference: number): void => {
    if (measured === undefined || !Number.isFinite(measured)) return;
    parts.push(`${what} ${num(measured, 3)} s (${reference} s then: ${num(ratio(measured, reference), 2)}x)`);
  };
  row("`nft -f` of (a)", by('a')?.median.nft?.wall, ISSUE_REFERENCE.nftLoadS);
  row("(a)'s floor", Number(by('a')?.extra?.floorWallS), ISSUE_REFERENCE.cFloorS);
  row('`nft list` of the map (d)', by('d')?.median.nft?.wall, ISSUE_REFERENCE.nftListS);
  row('`nft -f` of (b5)', by('b5')?.median.nft?.wall, ISSUE_REFERENCE.nftShape5S);
  if (!parts.length) return undefined;
  return `This machine against the figures the targets were set by (docs/architecture.md; not judged): ${parts.join('; ')}`;
}

export function renderTable(results: readonly CaseResult[]): string {
  const rows: string[][] = [['case', 'side', 'wall s', 'user s', 'sys s', 'peak MB', 'user/sys', 'wall/sys', 'nft/nftlink wall']];
  const notes: string[] = [];
  for (const r of results) {
    if (r.id === 'c') continue;
    const l = r.median.nftlink;
    const n = r.median.nft;
    for (const side of ['nftlink', 'nft'] as const) {
      const m = r.median[side];
      if (!m) continue;
      rows.push([
        side === 'nftlink' ? r.id : '',
        side,
        num(m.wall, 3),
        num(m.user, 2),
        num(m.sys, 2),
        num(m.rssMB, 0),
        num(ratio(m.user, m.sys), 2),
        num(ratio(m.wall, m.sys), 2),
        side === 'nft' && l ? `${num(ratio(m.wall, l.wall), 2)}x` : '',
      ]);
    }
    if (l && n === undefined) notes.push(`(${r.id}) no nft run`);
    const e = r.extra ?? {};
    const phases = Object.entries(e)
      .map(([k, v]) => `${k} ${typeof v === 'number' ? v.toFixed(k.endsWith('S') ? 3 : 1) : v}`)
      .join(', ');
    notes.push(`(${r.id}) ${r.title}${phases ? `; in-process medians: ${phases}` : ''}`);
    for (const note of [sizedMapNote(r), unboundNote(r)]) if (note) notes.push(note);
  }
  let s = pad(rows) + '\n\n' + notes.join('\n') + '\n';
  const c = results.find((r) => r.id === 'c');
  if (c?.extra) {
    const e = c.extra;
    s +=
      `\n(c) ${c.title}\n` +
      `    nftlink, one process: ${e.nftlinkUpdates} updates, median ${num(Number(e.nftlinkMedianMs), 3)} ms, p99 ${num(Number(e.nftlinkP99Ms), 3)} ms, max ${num(Number(e.nftlinkMaxMs), 3)} ms (build + commit)\n` +
      `    nft -f, one process per update: ${e.nftUpdates} runs, median ${num(Number(e.nftMedianMs), 1)} ms, p99 ${num(Number(e.nftP99Ms), 1)} ms` +
      `  (nft/nftlink median ${num(ratio(Number(e.nftMedianMs), Number(e.nftlinkMedianMs)), 0)}x)\n`;
  }
  return s;
}

export function renderTargets(list: readonly TargetResult[]): string {
  const label = (t: TargetResult): string => (t.needed === false ? 'n/a ' : t.pass ? 'PASS' : 'MISS');
  const perRun = (t: TargetResult): string => (t.perRun ? ` (run by run ${num(t.perRun.min, 2)}-${num(t.perRun.max, 2)})` : '');
  const lines = list.map((t) => `${label(t)}  ${t.target}: ${num(t.value, t.unit === 'ms' ? 3 : 2)} ${t.unit}${perRun(t)}${t.needed === false ? ' (the wall target is met)' : ''}`);
  return lines.join('\n') + '\n' + verdict(list) + '\n';
}

/**
 * One line over all targets. A wall target missed counts as met where its floor fallback passes:
 * the issue's rule where the kernel's share rules the wall out.
 */
function verdict(list: readonly TargetResult[]): string {
  const missed: string[] = [];
  let viaFloor = 0;
  for (const t of list) {
    if (t.pass || t.fallbackOf !== undefined) continue;
    const fallback = list.find((f) => f.fallbackOf === t.target);
    if (fallback?.pass) viaFloor++;
    else missed.push(fallback ? `${t.target} (and its floor fallback)` : t.target);
  }
  if (missed.length) return `verdict: ${missed.length} target(s) MISSED: ${missed.join('; ')}`;
  return `verdict: every target met${viaFloor ? ` (${viaFloor} wall target(s) through the floor fallback)` : ''}`;
}
