// nftlink/testing is the package's second entry: a user imports FakeNftables from it, and the main
// entry does not load it. Reads the build (dist/), as the CLI tests do.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bundle = join(root, 'dist', 'bundle');

function requireBuild(): void {
  if (!existsSync(join(bundle, 'testing.js'))) throw new Error('dist/ is missing: run npm run build:ts (scripts/test.sh does)');
}

/** The files a bundle entry loads: itself and the chunks it imports, transitively. */
function loadedFiles(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*'(\.[^']+)'/g)) visit(join(dirname(file), m[1]!));
  };
  visit(entry);
  return seen;
}

it("a user's program imports FakeNftables from nftlink/testing, and Transaction from nftlink", () => {
  requireBuild();
  const program = `
    import { FakeNftables } from 'nftlink/testing';
    import { Transaction } from 'nftlink';
    const fake = new FakeNftables();
    await fake.commit(new Transaction().add({ table: { family: 'ip', name: 't' } }));
    process.stdout.write(fake.render());
  `;
  // The package resolves its own name through "exports" (a self-reference), as a dependent's would.
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', program], { cwd: root, encoding: 'utf8' });
  expect(out).toBe('table ip t {\n}\n');
});

it('the main entry does not load the fake', () => {
  requireBuild();
  const main = [...loadedFiles(join(bundle, 'index.js'))];
  expect(main.length).toBeGreaterThan(1);
  expect(main.filter((f) => readFileSync(f, 'utf8').includes('class FakeNftables'))).toEqual([]);
  expect([...loadedFiles(join(bundle, 'testing.js'))].some((f) => readFileSync(f, 'utf8').includes('class FakeNftables'))).toBe(true);
});
