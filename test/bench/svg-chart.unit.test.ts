import { describe, expect, it } from 'vitest';
import { barChart, formatTick, lineChart, type LineChartOptions } from '../../bench/svg-chart.js';
import { formatSeconds, loadChart } from '../../bench/load-chart.js';
import type { CaseResult } from '../../bench/results.js';

/** Checks that the text is one well-formed XML element tree (tags balanced, attributes quoted). */
function wellFormed(xml: string): string | undefined {
  const stack: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let at = 0;
  let roots = 0;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    const between = xml.slice(at, m.index);
    if (/[<>]/.test(between)) return `stray markup before offset ${m.index}: ${between.slice(0, 40)}`;
    if (/&(?!amp;|lt;|gt;|quot;|#\d+;)/.test(between)) return `unescaped & before offset ${m.index}`;
    at = tag.lastIndex;
    const [, close, name, , selfClose] = m;
    if (close) {
      if (stack.pop() !== name) return `</${name}> closes nothing open`;
    } else {
      if (stack.length === 0) roots++;
      if (!selfClose) stack.push(name!);
    }
  }
  if (/[<>]/.test(xml.slice(at))) return 'stray markup at the end';
  if (stack.length) return `unclosed <${stack.join('>, <')}>`;
  return roots === 1 ? undefined : `${roots} root elements`;
}

/** The points of each series' path, in SVG coordinates. */
function paths(svg: string): { name: string; points: { x: number; y: number }[]; dashed: boolean }[] {
  return [...svg.matchAll(/<path [^>]*data-name="([^"]*)" d="([^"]*)"[^>]*\/>/g)].map((m) => ({
    name: m[1]!,
    dashed: m[0].includes('stroke-dasharray'),
    points: [...m[2]!.matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)].map((p) => ({ x: Number(p[1]), y: Number(p[2]) })),
  }));
}

function ticks(svg: string, axis: 'x' | 'y'): { value: number; label: string; at: number }[] {
  const re = new RegExp(`<text class="tick ${axis}" data-value="([^"]+)" x="([\\d.]+)" y="([\\d.]+)"[^>]*>([^<]*)</text>`, 'g');
  return [...svg.matchAll(re)].map((m) => ({ value: Number(m[1]), label: m[4]!, at: Number(axis === 'x' ? m[2] : m[3]) }));
}

const opts: LineChartOptions = {
  title: 'connect <latency> & more',
  xLabel: 'services',
  yLabel: 'µs',
  xLog: true,
  series: [
    { name: 'slots p50', points: [{ x: 10_000, y: 41 }, { x: 10, y: 40 }, { x: 1000, y: 40.5 }] },
    { name: 'iptables p50', points: [{ x: 10, y: 40 }, { x: 1000, y: 80 }, { x: 10_000, y: 300 }] },
    { name: 'iptables p99', points: [{ x: 10, y: 70 }, { x: 1000, y: 150 }, { x: 10_000, y: 600 }], dashed: true },
  ],
};

describe('lineChart', () => {
  const svg = lineChart(opts);

  it('writes one well-formed SVG document, with the text escaped', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(wellFormed(svg)).toBeUndefined();
    expect(svg).toContain('connect &lt;latency&gt; &amp; more');
  });

  it('draws one path per series, dashed where asked, and names every series in the legend', () => {
    const ps = paths(svg);
    expect(ps.map((p) => p.name)).toEqual(['slots p50', 'iptables p50', 'iptables p99']);
    expect((svg.match(/<path /g) ?? []).length).toBe(3);
    expect(ps.map((p) => p.dashed)).toEqual([false, false, true]);
    expect((svg.match(/<line class="legend"/g) ?? []).length).toBe(3);
    for (const s of opts.series) expect(svg).toContain(`>${s.name}</text>`);
  });

  it('maps points monotonically: larger x further right, larger y higher up (smaller SVG y)', () => {
    for (const p of paths(svg)) {
      expect(p.points).toHaveLength(3);
      for (let i = 1; i < p.points.length; i++) expect(p.points[i]!.x).toBeGreaterThan(p.points[i - 1]!.x);
    }
    // slots' points come sorted by x (10, 1000, 10000) whatever order they were given in.
    const [slots, ipt, ipt99] = paths(svg);
    expect(slots!.points[2]!.y).toBeLessThan(slots!.points[0]!.y);
    for (let i = 1; i < 3; i++) expect(ipt!.points[i]!.y).toBeLessThan(ipt!.points[i - 1]!.y);
    // Equal data, equal pixels; the same x in every series lands on the same column.
    expect(slots!.points[0]).toEqual(ipt!.points[0]);
    expect(ipt99!.points.map((p) => p.x)).toEqual(ipt!.points.map((p) => p.x));
    // A linear y axis: 40 -> 80 -> 300 are proportional distances.
    const [a, b, c] = ipt!.points.map((p) => p.y);
    expect((a! - c!) / (a! - b!)).toBeCloseTo(260 / 40, 1);
  });

  it('ticks a log axis at the powers of ten, evenly spaced, covering the data', () => {
    const xt = ticks(svg, 'x');
    expect(xt.map((t) => t.value)).toEqual([10, 100, 1000, 10_000]);
    expect(xt.map((t) => t.label)).toEqual(['10', '100', '1k', '10k']);
    const gaps = xt.slice(1).map((t, i) => t.at - xt[i]!.at);
    for (const g of gaps) expect(g).toBeCloseTo(gaps[0]!, 0);
    // log10(1000) is two thirds of the way from 10 to 10k.
    const [slots] = paths(svg);
    expect(slots!.points[1]!.x).toBeCloseTo(xt[2]!.at, 0);
  });

  it('ticks a linear axis at round numbers from zero past the largest value', () => {
    const yt = ticks(svg, 'y').map((t) => t.value);
    expect(yt[0]).toBe(0);
    expect(yt[yt.length - 1]).toBeGreaterThanOrEqual(600);
    const steps = new Set(yt.slice(1).map((v, i) => v - yt[i]!));
    expect(steps.size).toBe(1);
    expect([1, 2, 5].map((m) => m * 10 ** Math.floor(Math.log10([...steps][0]!)))).toContain([...steps][0]);
  });

  it('a log y axis ticks at powers of ten too, and points it cannot show are left out', () => {
    const s = lineChart({ ...opts, yLog: true, series: [{ name: 'a', points: [{ x: 10, y: 0 }, { x: 100, y: 5 }, { x: 1000, y: 5000 }, { x: 0, y: 7 }] }] });
    expect(ticks(s, 'y').map((t) => t.value)).toEqual([1, 10, 100, 1000, 10_000]);
    expect(paths(s)[0]!.points).toHaveLength(2);
    expect(wellFormed(s)).toBeUndefined();
  });

  it('formats ticks compactly', () => {
    expect([1, 10, 1000, 10_000, 2_000_000, 0.5, 12.345].map(formatTick)).toEqual(['1', '10', '1k', '10k', '2M', '0.5', '12.3']);
  });
});

/** Every bar: its group, series, value and extent in SVG coordinates. */
function bars(svg: string): { group: string; series: string; value: number; x: number; y: number; width: number }[] {
  return [...svg.matchAll(/<rect class="bar" data-group="([^"]*)" data-series="([^"]*)" data-value="([^"]*)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"/g)].map((m) => ({
    group: m[1]!,
    series: m[2]!,
    value: Number(m[3]),
    x: Number(m[4]),
    y: Number(m[5]),
    width: Number(m[6]),
  }));
}

describe('barChart', () => {
  const opts = {
    title: 'a & b',
    valueLabel: 'seconds',
    series: [{ name: 'one' }, { name: 'two' }],
    groups: [
      { label: 'first', values: [0.5, 20] },
      { label: 'second <x>', values: [0.0002, undefined] },
      { label: 'third', values: [0, 3] },
    ],
    log: true,
  };

  it('writes one well-formed SVG document, one bar per value it can show, in group order', () => {
    const svg = barChart(opts);
    expect(wellFormed(svg)).toBeUndefined();
    expect(svg).toContain('a &amp; b');
    expect(svg).toContain('second &lt;x&gt;');
    // No bar for a missing value, nor for zero on a log axis.
    expect(bars(svg).map((b) => `${b.group}/${b.series}`)).toEqual(['first/one', 'first/two', 'second &lt;x&gt;/one', 'third/two']);
    const ys = bars(svg).map((b) => b.y);
    expect([...ys].sort((a, b) => a - b)).toEqual(ys);
  });

  it('on a log axis, every bar starts at the lowest tick and a bar is as long as its value\'s log', () => {
    const svg = barChart(opts);
    const xt = ticks(svg, 'x');
    expect(xt.map((t) => t.value)).toEqual([0.0001, 0.001, 0.01, 0.1, 1, 10, 100]);
    const bs = bars(svg);
    for (const b of bs) expect(b.x).toBeCloseTo(xt[0]!.at, 0);
    const decade = xt[1]!.at - xt[0]!.at;
    const byValue = (v: number) => bs.find((b) => b.value === v)!;
    // 20 is 5.3 decades above 0.0001; 0.5 is 3.7.
    expect(byValue(20).width / decade).toBeCloseTo(Math.log10(20 / 0.0001), 1);
    expect(byValue(0.5).width / decade).toBeCloseTo(Math.log10(0.5 / 0.0001), 1);
  });
});

describe('loadChart', () => {
  const figures = (wall: number) => ({ wall, user: 0.1, sys: 0.2, rssMB: 60 });
  const a: CaseResult = {
    id: 'a',
    title: 'a',
    runs: [],
    median: { nftlink: figures(0.44), nft: figures(1.6) },
    extra: { floorWallS: 0.35, sizedMapSize: 131072, sizedWallS: 0.32, sizedFloorWallS: 0.19 },
  };
  const c: CaseResult = { id: 'c', title: 'c', runs: [], median: {}, extra: { nftlinkMedianMs: 0.104, nftMedianMs: 20.1 } };

  it("draws each case's nftlink, nft -f and floor walls, (a)'s sized map, and (c) per update in seconds", () => {
    const svg = loadChart([a, c], 'title');
    expect(wellFormed(svg)).toBeUndefined();
    expect(bars(svg).map((b) => [b.group, b.series, b.value])).toEqual([
      ['(a)', 'nftlink', 0.44],
      ['(a)', 'nft -f', 1.6],
      ['(a)', 'floor (node, addon, kernel)', 0.35],
      ['(a) sized map', 'nftlink', 0.32],
      ['(a) sized map', 'floor (node, addon, kernel)', 0.19],
      ['(c) one update', 'nftlink', 0.000104],
      ['(c) one update', 'nft -f', 0.0201],
    ]);
    expect(svg).toContain('>20.1 ms</text>');
  });

  it('leaves out the sized map where the run did not time it', () => {
    const plain: CaseResult = { ...a, extra: { floorWallS: 0.35 } };
    expect(bars(loadChart([plain], 'title')).map((b) => b.group)).toEqual(['(a)', '(a)', '(a)']);
  });

  it('formats seconds as a reader expects them', () => {
    expect([0.000104, 0.0201, 0.439, 16.45].map(formatSeconds)).toEqual(['0.104 ms', '20.1 ms', '0.439 s', '16.4 s']);
  });
});
