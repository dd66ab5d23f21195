// `npm run bench:bind-walk` as users run it: it prints a row per map size and a cost per element,
// and leaves no namespace behind. Its figures are the benchmark's business; this only checks that
// the probe runs, reports what it measured, and cleans up.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { benchNamespaces } from '../helpers/netns.js';

const probe = new URL('../../dist-bench/bench/bind-walk.js', import.meta.url);

it('bench:bind-walk prints one row per map size and the cost per element, and removes its namespaces', () => {
  if (!existsSync(probe)) throw new Error('dist-bench/ is missing: run npm run build:bench (scripts/test.sh does)');
  const before = benchNamespaces('nftlink-bw');
  const r = spawnSync(process.execPath, [probe.pathname, '--elements', '10,200', '--rules', '4', '--runs', '2'], { encoding: 'utf8' });
  expect(r.stderr).not.toMatch(/Error/);
  expect(r.status).toBe(0);
  const rows = r.stdout.split('\n').filter((l) => /^\d+ +[\d.]+ ms +[\d.]+ ms$/.test(l.trim()));
  expect(rows.map((l) => l.trim().split(/ +/)[0])).toEqual(['10', '200']);
  expect(r.stdout).toMatch(/rules one chain each: -?[\d.]+ ns per element walked per rule \(10 -> 200 elements\)/);
  expect(benchNamespaces('nftlink-bw')).toEqual(before);
});

it('bench:bind-walk refuses a map too small for its numgen range, naming the option', () => {
  const r = spawnSync(process.execPath, [probe.pathname, '--elements', '3'], { encoding: 'utf8' });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('--elements takes integers of at least 5, got "3"');
});
