import { describe, expect, it } from 'vitest';
import { bucketsCount, bucketsDelta, histogramBuckets, histogramQuantile, trend } from '../../bench/reliability/figures.js';

const SCRAPE = (counts: number[]): string =>
  ['0', '0.25', '0.5', '1', '2', '+Inf'].map((le, i) => `h_bucket{le="${le}",ip_family="IPv4"} ${counts[i]}`).join('\n') + '\nh_bucket{le="1",ip_family="IPv6"} 99\n';

describe('histogram quantiles (as histogram_quantile)', () => {
  it('reads one family, subtracts the earlier scrape, and interpolates within the bucket of the rank', () => {
    const before = histogramBuckets(SCRAPE([0, 0, 0, 0, 0, 0]), 'h', 'ip_family="IPv4"');
    const after = histogramBuckets(SCRAPE([0, 10, 50, 90, 100, 100]), 'h', 'ip_family="IPv4"');
    const d = bucketsDelta(before, after);
    expect(bucketsCount(d)).toBe(100);
    // rank 50 is the top of (0.25, 0.5]; rank 70 is half-way through (0.5, 1]; rank 99 in (1, 2].
    expect(histogramQuantile(0.5, d)).toBeCloseTo(0.5);
    expect(histogramQuantile(0.7, d)).toBeCloseTo(0.75);
    expect(histogramQuantile(0.99, d)).toBeCloseTo(1.9);
  });

  it('has no quantile without observations, and the largest finite bound for a rank in +Inf', () => {
    expect(histogramQuantile(0.5, histogramBuckets(SCRAPE([0, 0, 0, 0, 0, 0]), 'h', 'IPv4'))).toBeNaN();
    expect(histogramQuantile(0.99, histogramBuckets(SCRAPE([0, 0, 0, 0, 1, 10]), 'h', 'IPv4'))).toBe(2);
  });
});

describe('least-squares trend', () => {
  it('finds a slope and calls it significant when the points lie on a line with small noise', () => {
    const pts = Array.from({ length: 50 }, (_, i) => ({ t: i * 10, y: 100 + i * 10 * (2 / 3600) + (i % 2 ? 0.001 : -0.001) }));
    const t = trend(pts);
    expect(t.slopePerHour).toBeCloseTo(2, 1);
    expect(t.indistinguishableFromZero).toBe(false);
  });

  it('calls a flat series with noise indistinguishable from 0', () => {
    const noise = [3, -1, 4, -1, -5, 9, -2, 6, -5, 3, -5, 8, -9, 7, -9, 3, -2, 3, -8, 4];
    const t = trend(noise.map((y, i) => ({ t: i * 10, y: 300 + y })));
    expect(t.indistinguishableFromZero).toBe(true);
    expect(t.n).toBe(20);
  });

  it('has no trend from fewer than 3 points', () => {
    expect(trend([{ t: 0, y: 1 }, { t: 1, y: 2 }]).slopePerHour).toBeNaN();
  });
});
