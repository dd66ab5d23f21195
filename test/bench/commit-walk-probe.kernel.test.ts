// `npm run bench:commit-walk` as users run it: a row per chain count, warm and cold, the cost per
// chain, and no namespace left behind. Its figures are the benchmark's business; this checks that
// the probe runs (each timed commit adds or deletes its element: a commit the kernel refused would
// end it with an error), reports what it measured, and cleans up.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { benchNamespaces } from '../helpers/netns.js';

const probe = new URL('../../dist-bench/bench/commit-walk.js', import.meta.url);

it('bench:commit-walk prints one row per chain count and the cost per chain, and removes its namespaces', () => {
  if (!existsSync(probe)) throw new Error('dist-bench/ is missing: run npm run build:bench (scripts/test.sh does)');
  const before = benchNamespaces('nftlink-cw');
  const r = spawnSync(process.execPath, [probe.pathname, '--chains', '50,0', '--runs', '3'], { encoding: 'utf8' });
  expect(r.stderr).not.toMatch(/Error/);
  expect(r.status).toBe(0);
  const rows = r.stdout.split('\n').filter((l) => /^\d+ +[\d.]+ ms +[\d.]+ ms$/.test(l.trim()));
  expect(rows.map((l) => l.trim().split(/ +/)[0])).toEqual(['0', '50']);
  expect(r.stdout).toMatch(/per chain in the namespace \(0 -> 50 chains\): -?[\d.]+ ns warm, -?[\d.]+ ns cold, at every commit/);
  expect(benchNamespaces('nftlink-cw')).toEqual(before);
});

it('bench:commit-walk refuses a chain count that is not a whole number, naming the option', () => {
  const r = spawnSync(process.execPath, [probe.pathname, '--chains', '10,x'], { encoding: 'utf8' });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('--chains takes integers of at least 0, got "10,x"');
});
