import { describe, expect, it } from 'vitest';
import { parseReliabilityArgs } from '../../bench/reliability/args.js';

describe('npm run reliability flags', () => {
  it('defaults to the report sizes: 10k services, 50 changes/s for 60 s, a 30-minute soak, 20 trials, 1,000 slow connections', () => {
    const o = parseReliabilityArgs([]);
    expect(o).toMatchObject({ scenarios: ['churn', 'soak', 'chaos', 'hostile'], services: 10_000, rate: 50, churnSeconds: 60, soakSeconds: 1800, trials: 20, slowConnections: 1000, layout: 'slots' });
  });

  it('takes scenarios and sizes, and names the flag of a bad value', () => {
    expect(parseReliabilityArgs(['--scenarios', 'chaos,hostile', '--trials', '40', '--layout', 'kube-proxy'])).toMatchObject({ scenarios: ['chaos', 'hostile'], trials: 40, layout: 'kube-proxy' });
    expect(() => parseReliabilityArgs(['--scenarios', 'fuzz'])).toThrow(/--scenarios: unknown scenario "fuzz"/);
    expect(() => parseReliabilityArgs(['--services', '3'])).toThrow(/--services needs an integer >= 8/);
    expect(() => parseReliabilityArgs(['--bogus'])).toThrow(/unknown flag --bogus/);
  });
});
