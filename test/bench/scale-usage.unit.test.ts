// `npm run bench` (the scale benchmark) as users start it: --help prints its own usage and runs
// nothing; a wrong option fails with the usage. The benchmark's figures are its own business.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';

const scale = new URL('../../dist-bench/bench/scale/index.js', import.meta.url);

const run = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
  if (!existsSync(scale)) throw new Error('dist-bench/ is missing: run npm run build:bench (scripts/test.sh does)');
  return spawnSync(process.execPath, [scale.pathname, ...args], { encoding: 'utf8' });
};

it('npm run bench -- --help prints the usage on stdout with exit 0', () => {
  const help = run(['--help']);
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/^usage: npm run bench -- \[--runs N\]/);
  expect(help.stderr).toBe('');
});

it('npm run bench -- with an unknown option fails, naming it, with the usage', () => {
  const bad = run(['--bogus']);
  expect(bad.status).toBe(1);
  expect(bad.stderr).toContain('unknown option --bogus');
  expect(bad.stderr).toContain('usage: npm run bench --');
});
