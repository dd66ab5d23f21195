// Order statistics for the figures. Medians, not means: on a noisy 2-core machine one run stalled
// by a kworker (a namespace being torn down, say) would drag a mean far more than the median.

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile (p in 0..100): with 200 samples p99 is the 198th smallest. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1]!;
}

export function ratio(a: number, b: number): number {
  return b > 0 ? a / b : NaN;
}
