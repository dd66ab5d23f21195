// The API reference builds (`npm run docs:api`: TypeDoc over the entries 'nftlink' and
// 'nftlink/testing', typedoc.json) with warnings as errors: a type a public signature uses but the
// package does not export, or a doc comment TypeDoc cannot read, fails here.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from './doc-examples.js';

it('npm run docs:api builds the reference of both entries without a warning', () => {
  const out = join(repoRoot, 'build', 'docs', 'api');
  const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typedoc', 'bin', 'typedoc')], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  for (const page of ['index.html', 'classes/nftlink.Transaction.html', 'classes/nftlink.NftCommitError.html', 'classes/nftlink_testing.FakeNftables.html']) {
    expect(existsSync(join(out, page)), page).toBe(true);
  }
  // The doc comments are there, not only the signatures.
  expect(readFileSync(join(out, 'classes/nftlink_testing.FakeNftables.html'), 'utf8')).toContain('An in-memory nf_tables for tests');
}, 180_000);
