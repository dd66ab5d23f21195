// scripts/check-links.mjs, which scripts/test.sh runs before the tests: on a small tree in a
// temporary directory it passes links to files and headings that exist and names the broken ones.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '../../scripts/check-links.mjs');

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function check(readme: string, doc: string): { status: number | null; out: string } {
  const root = mkdtempSync(join(tmpdir(), 'nftlink-links-'));
  dirs.push(root);
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'README.md'), readme);
  writeFileSync(join(root, 'docs', 'guide.md'), doc);
  const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

const GUIDE = '# Guide\n\n## Where `nft list` is not a copy\n\nBack to the [front](../README.md).\n';

describe('check-links', () => {
  it('passes links to existing files and headings (GitHub anchors), and ignores links in code blocks', () => {
    const r = check('See [the guide](docs/guide.md#where-nft-list-is-not-a-copy) and [web](https://example.org).\n```\n[x](nowhere.md)\n```\n', GUIDE);
    expect(r.out).toContain('check-links: ok');
    expect(r.status).toBe(0);
  });

  it('names a link to a missing file and one to a missing heading', () => {
    const r = check('[gone](docs/gone.md) and [bad anchor](docs/guide.md#nothing-here)\n', GUIDE);
    expect(r.status).toBe(1);
    expect(r.out).toContain('README.md: docs/gone.md (no such file)');
    expect(r.out).toContain('README.md: docs/guide.md#nothing-here (no such heading)');
  });
});
