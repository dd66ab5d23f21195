// The figures of the reliability report that are pure arithmetic, apart from any kernel: the
// network programming latency quantiles from the proxy's histogram, and the least-squares trend of
// a sampled series.

/** Cumulative bucket counts of one histogram series: upper bound (seconds; Infinity for +Inf) -> count. */
export type Buckets = Map<number, number>;

/** The buckets of `name` with the given label (e.g. ip_family="IPv4") from a Prometheus text exposition. */
export function histogramBuckets(text: string, name: string, label: string): Buckets {
  const out: Buckets = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !line.includes(label)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined) continue;
    out.set(le === '+Inf' ? Infinity : Number(le), Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** The observations made between two scrapes of the same histogram. */
export function bucketsDelta(before: Buckets, after: Buckets): Buckets {
  const out: Buckets = new Map();
  for (const [le, n] of after) out.set(le, n - (before.get(le) ?? 0));
  return out;
}

export function bucketsCount(b: Buckets): number {
  return b.get(Infinity) ?? Math.max(0, ...b.values());
}

/**
 * The q-quantile (0..1) as Prometheus's histogram_quantile() estimates it: the bucket holding the
 * rank, linear within it (so its resolution is the bucket width: kube-proxy's buckets are 0.25 s
 * wide below 0.5 s, then 0.5 s, then 1 s). NaN with no observations; the largest finite bound if
 * the rank is in +Inf.
 */
export function histogramQuantile(q: number, b: Buckets): number {
  const bounds = [...b.keys()].sort((x, y) => x - y);
  const total = bucketsCount(b);
  if (!total) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const n = b.get(le)!;
    if (n >= rank) {
      if (le === Infinity) return lower;
      return n === below ? le : lower + ((le - lower) * (rank - below)) / (n - below);
    }
    lower = le;
    below = n;
  }
  return lower;
}

export interface Trend {
  /** Units of y per hour. */
  slopePerHour: number;
  /** Half-width of the 95% confidence interval of the slope (Student's t, n-2 degrees of freedom). */
  ci95PerHour: number;
  /** The interval contains 0: no trend can be told from noise at 95%. */
  indistinguishableFromZero: boolean;
  n: number;
}

/** Two-sided 95% Student's t quantiles for 1..30 degrees of freedom; 1.96 beyond. */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/**
 * Ordinary least squares of y on t (seconds): the slope, and its 95% confidence interval from the
 * residuals' standard error. Samples are autocorrelated (RSS is a sawtooth of GC cycles), which
 * makes this interval narrower than an exact one: it errs towards calling a flat series sloped,
 * never towards hiding a leak.
 */
export function trend(points: readonly { t: number; y: number }[]): Trend {
  const n = points.length;
  if (n < 3) return { slopePerHour: NaN, ci95PerHour: NaN, indistinguishableFromZero: false, n };
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let stt = 0;
  let sty = 0;
  for (const p of points) {
    stt += (p.t - mt) ** 2;
    sty += (p.t - mt) * (p.y - my);
  }
  const slope = sty / stt;
  const sse = points.reduce((s, p) => s + (p.y - my - slope * (p.t - mt)) ** 2, 0);
  const se = Math.sqrt(sse / (n - 2) / stt);
  const half = (T95[n - 3] ?? 1.96) * se;
  return { slopePerHour: slope * 3600, ci95PerHour: half * 3600, indistinguishableFromZero: Math.abs(slope) <= half, n };
}
