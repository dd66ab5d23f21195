// Charts as plain SVG text for the benchmarks' figures (docs/bench/*.svg): no dependencies, so a
// chart can be regenerated wherever the benchmark runs. Line charts: linear or log axes (log axes
// tick at the powers of ten), one <path> per series (dashed on request), a marker per point, and a
// legend. Bar charts: horizontal bars in groups (one bar per series), on a linear or log value axis.

export interface ChartPoint {
  x: number;
  y: number;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
  dashed?: boolean;
  /** A CSS colour; by default the series' place in the palette. */
  color?: string;
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  xLog?: boolean;
  yLog?: boolean;
  series: ChartSeries[];
}

const WIDTH = 880;
const HEIGHT = 460;
/** The plot area; the legend sits right of it. */
const PLOT = { left: 78, right: 620, top: 48, bottom: 396 };
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

interface Axis {
  /** Maps a data value to a pixel between `from` and `to`. */
  map(v: number): number;
  ticks: number[];
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** 10, 100, 1k, 10k, 1M; other numbers with at most 3 significant digits. */
export function formatTick(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6 && Number.isInteger(v / 1e6)) return `${v / 1e6}M`;
  if (a >= 1e3 && Number.isInteger(v / 1e3)) return `${v / 1e3}k`;
  return String(Number(v.toPrecision(3)));
}

/** Ticks at 1, 2 or 5 times a power of ten, about `count` of them, covering [lo, hi]. */
function niceTicks(lo: number, hi: number, count = 6): number[] {
  if (hi <= lo) hi = lo + (lo === 0 ? 1 : Math.abs(lo));
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  const last = Math.ceil(hi / step);
  for (let k = Math.floor(lo / step); k <= last; k++) out.push(Number((k * step).toPrecision(12)));
  return out;
}

// Reduced, not spread into Math.min/max: a series may have more points than the stack has room for.
const least = (xs: number[]): number => xs.reduce((m, x) => Math.min(m, x), Infinity);
const most = (xs: number[]): number => xs.reduce((m, x) => Math.max(m, x), -Infinity);

function axis(values: number[], log: boolean, from: number, to: number): Axis {
  if (log) {
    const logs = values.map(Math.log10);
    let lo = Math.floor(least(logs));
    let hi = Math.ceil(most(logs));
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
    if (hi === lo) hi = lo + 1;
    const ticks: number[] = [];
    // Rounded: 10 ** -4 is 0.00009999999999999999 in floating point.
    for (let e = lo; e <= hi; e++) ticks.push(Number((10 ** e).toPrecision(12)));
    return { map: (v) => from + ((Math.log10(v) - lo) / (hi - lo)) * (to - from), ticks };
  }
  const lo = Math.min(0, least(values));
  const ticks = niceTicks(lo, values.length ? most(values) : 1);
  const [a, b] = [ticks[0]!, ticks[ticks.length - 1]!];
  return { map: (v) => from + ((v - a) / (b - a)) * (to - from), ticks };
}

const px = (v: number): string => v.toFixed(1);

export function lineChart(opts: LineChartOptions): string {
  // Points a log axis cannot show (zero, negative) and non-numbers are left out, not clamped.
  const usable = (p: ChartPoint): boolean => Number.isFinite(p.x) && Number.isFinite(p.y) && (!opts.xLog || p.x > 0) && (!opts.yLog || p.y > 0);
  const series = opts.series.map((s, i) => ({
    ...s,
    color: s.color ?? PALETTE[i % PALETTE.length]!,
    points: s.points.filter(usable).sort((a, b) => a.x - b.x),
  }));
  const all = series.flatMap((s) => s.points);
  const xs = axis(all.map((p) => p.x), opts.xLog ?? false, PLOT.left, PLOT.right);
  const ys = axis(all.map((p) => p.y), opts.yLog ?? false, PLOT.bottom, PLOT.top);

  const out = svgOpen(opts.title);

  for (const t of xs.ticks) {
    const x = px(xs.map(t));
    out.push(`<line class="grid" x1="${x}" y1="${PLOT.top}" x2="${x}" y2="${PLOT.bottom}" stroke="#e0e0e0"/>`);
    out.push(`<text class="tick x" data-value="${t}" x="${x}" y="${PLOT.bottom + 18}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  for (const t of ys.ticks) {
    const y = px(ys.map(t));
    out.push(`<line class="grid" x1="${PLOT.left}" y1="${y}" x2="${PLOT.right}" y2="${y}" stroke="#e0e0e0"/>`);
    out.push(`<text class="tick y" data-value="${t}" x="${PLOT.left - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatTick(t)}</text>`);
  }
  out.push(`<line class="axis" x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="#000000"/>`);
  out.push(`<line class="axis" x1="${PLOT.left}" y1="${PLOT.top}" x2="${PLOT.left}" y2="${PLOT.bottom}" stroke="#000000"/>`);
  out.push(`<text x="${(PLOT.left + PLOT.right) / 2}" y="${PLOT.bottom + 42}" text-anchor="middle">${escapeXml(opts.xLabel)}</text>`);
  const midY = (PLOT.top + PLOT.bottom) / 2;
  out.push(`<text x="20" y="${midY}" text-anchor="middle" transform="rotate(-90 20 ${midY})">${escapeXml(opts.yLabel)}</text>`);

  for (const s of series) {
    const dash = s.dashed ? ' stroke-dasharray="7 4"' : '';
    const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${px(xs.map(p.x))} ${px(ys.map(p.y))}`).join(' ');
    out.push(`<path class="series" data-name="${escapeXml(s.name)}" d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    for (const p of s.points) out.push(`<circle cx="${px(xs.map(p.x))}" cy="${px(ys.map(p.y))}" r="3" fill="${s.color}"><title>${escapeXml(`${s.name}: ${p.x}, ${p.y}`)}</title></circle>`);
  }

  legend(out, series, 'line');
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** The opening of a chart: the <svg> element, a white background and the title. */
function svgOpen(title: string, height = HEIGHT): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  ];
}

/** The legend right of the plot: a line (dashed on request) or a swatch per series. */
function legend(out: string[], series: readonly { name: string; color: string; dashed?: boolean }[], mark: 'line' | 'swatch'): void {
  const legendX = PLOT.right + 20;
  series.forEach((s, i) => {
    const y = PLOT.top + 8 + i * 20;
    if (mark === 'swatch') out.push(`<rect class="legend" x="${legendX}" y="${y - 6}" width="28" height="12" fill="${s.color}"/>`);
    else {
      const dash = s.dashed ? ' stroke-dasharray="7 4"' : '';
      out.push(`<line class="legend" x1="${legendX}" y1="${y}" x2="${legendX + 28}" y2="${y}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    }
    out.push(`<text x="${legendX + 36}" y="${y}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
}

export interface BarGroup {
  label: string;
  /** One value per series, in the order of `BarChartOptions.series`; undefined: no bar. */
  values: (number | undefined)[];
}

export interface BarChartOptions {
  title: string;
  valueLabel: string;
  series: { name: string; color?: string }[];
  groups: BarGroup[];
  log?: boolean;
  /** The text beside each bar (its value by default, as formatTick writes it). */
  formatValue?: (v: number) => string;
}

/** Room per bar, and the margin left of the plot for the groups' labels. */
const BAR = 11;
const BAR_GAP = 10;
const BAR_LABELS = 150;

/**
 * Horizontal bars, one group per row (its label at the left) and one bar per series in a group,
 * the value written at the bar's end. On a log axis a bar starts at the axis's lowest power of ten.
 * Values a log axis cannot show (zero, negative) and non-numbers get no bar.
 */
export function barChart(opts: BarChartOptions): string {
  const series = opts.series.map((s, i) => ({ ...s, color: s.color ?? PALETTE[i % PALETTE.length]! }));
  const usable = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v) && (!opts.log || v > 0);
  const values = opts.groups.flatMap((g) => g.values.filter(usable));
  const left = BAR_LABELS;
  // The axis ends short of the plot's edge: the longest bar's value is written after it.
  const right = PLOT.right - 50;
  const xs = axis(values, opts.log ?? false, left, right);
  const groupHeight = (g: BarGroup): number => g.values.filter(usable).length * BAR + BAR_GAP;
  const plotBottom = PLOT.top + opts.groups.reduce((h, g) => h + groupHeight(g), 0);
  const height = plotBottom + 56;
  const format = opts.formatValue ?? formatTick;

  const out = svgOpen(opts.title, height);
  for (const t of xs.ticks) {
    const x = px(xs.map(t));
    out.push(`<line class="grid" x1="${x}" y1="${PLOT.top}" x2="${x}" y2="${plotBottom}" stroke="#e0e0e0"/>`);
    out.push(`<text class="tick x" data-value="${t}" x="${x}" y="${plotBottom + 18}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  out.push(`<line class="axis" x1="${left}" y1="${plotBottom}" x2="${right}" y2="${plotBottom}" stroke="#000000"/>`);
  out.push(`<line class="axis" x1="${left}" y1="${PLOT.top}" x2="${left}" y2="${plotBottom}" stroke="#000000"/>`);
  out.push(`<text x="${(left + PLOT.right) / 2}" y="${plotBottom + 42}" text-anchor="middle">${escapeXml(opts.valueLabel)}</text>`);

  const base = xs.map(xs.ticks[0]!);
  let y = PLOT.top + BAR_GAP / 2;
  for (const g of opts.groups) {
    const top = y;
    g.values.forEach((v, i) => {
      if (!usable(v)) return;
      const s = series[i]!;
      const end = xs.map(v);
      out.push(
        `<rect class="bar" data-group="${escapeXml(g.label)}" data-series="${escapeXml(s.name)}" data-value="${v}" x="${px(base)}" y="${px(y)}" width="${px(Math.max(end - base, 1))}" height="${BAR - 2}" fill="${s.color}"><title>${escapeXml(`${g.label}, ${s.name}: ${format(v)}`)}</title></rect>`,
      );
      out.push(`<text x="${px(end + 4)}" y="${px(y + (BAR - 2) / 2)}" dominant-baseline="middle" font-size="10">${escapeXml(format(v))}</text>`);
      y += BAR;
    });
    out.push(`<text class="group" x="${left - 8}" y="${px((top + y) / 2)}" text-anchor="end" dominant-baseline="middle">${escapeXml(g.label)}</text>`);
    y += BAR_GAP;
  }
  legend(out, series, 'swatch');
  out.push('</svg>');
  return out.join('\n') + '\n';
}
