// The data-plane tests' check of an even spread over endpoints: it must pass a fair tail (a spread
// CI once failed on) and still catch a skewed or incomplete one.

import { describe, expect, it } from 'vitest';
import { chiSquaredP, chiSquaredUniform, expectEvenSpread } from './helpers.js';

describe('expectEvenSpread', () => {
  it('computes the chi-squared statistic and its p-value (closed form for even degrees of freedom)', () => {
    expect(chiSquaredUniform([100, 100, 100])).toBe(0);
    expect(chiSquaredUniform([130, 91, 79])).toBeCloseTo(14.22, 2);
    expect(chiSquaredP(14.22, 2)).toBeCloseTo(Math.exp(-7.11), 10);
    // 4 degrees of freedom: e^{-x/2} (1 + x/2).
    expect(chiSquaredP(6, 4)).toBeCloseTo(Math.exp(-3) * 4, 10);
    expect(() => chiSquaredP(1, 3)).toThrow(/even/);
  });

  it('passes a fair spread in its tail', () => {
    expect(() => expectEvenSpread({ pod0: 130, pod1: 91, pod2: 79 }, ['pod0', 'pod1', 'pod2'])).not.toThrow();
  });

  it('fails a 50/25/25 split over 300 connections, and a missing or unexpected endpoint', () => {
    expect(() => expectEvenSpread({ pod0: 150, pod1: 75, pod2: 75 }, ['pod0', 'pod1', 'pod2'])).toThrow(/chi2/);
    expect(() => expectEvenSpread({ pod0: 150, pod1: 150 }, ['pod0', 'pod1', 'pod2'])).toThrow();
    expect(() => expectEvenSpread({ pod0: 100, pod1: 100, pod9: 100 }, ['pod0', 'pod1', 'pod2'])).toThrow();
  });
});
