// Every complete TypeScript example of README.md and docs/ runs: each as its own Node process
// (type stripping, 'nftlink' resolved by name to the built package, dist/) inside a fresh network
// namespace, as `ip netns exec NS node example.ts`, and must exit 0 (and print its ```text output
// block, when it has one). An example that commits to
// "the namespace it runs in" (Nftables.open()) so writes there, never to the root namespace.
// examples.unit.test.ts compiles them (and the fragments).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withNetns } from '../helpers/netns.js';
import { builtPackageOptions, compile, docExamples, repoRoot, writeExamples } from './doc-examples.js';

const programs = docExamples().filter((e) => !e.fragment);
const paths = writeExamples(programs, 'run');

describe('the complete examples of README.md and docs/ run in a fresh namespace', () => {
  it('has the built package to run them against', () => {
    expect(existsSync(join(repoRoot, 'dist', 'bundle', 'index.js')), 'dist/ is missing: npm run build:ts').toBe(true);
  });
  it('they compile against the built declarations too, as a dependent sees them (dist/index.d.ts)', () => {
    const diagnostics = compile(paths, builtPackageOptions);
    expect([...diagnostics.values()].flat()).toEqual([]);
  });
  programs.forEach((ex, i) => {
    it(ex.where, async () => {
      await withNetns(1, (ns) => {
        const r = spawnSync('ip', ['netns', 'exec', ns.name, process.execPath, '--disable-warning=ExperimentalWarning', paths[i]!], {
          cwd: repoRoot,
          encoding: 'utf8',
          timeout: 30_000,
        });
        expect(r.error).toBeUndefined();
        expect(r.status, `${r.stderr}\n${r.stdout}`).toBe(0);
        expect(r.stderr).toBe('');
        if (ex.output !== undefined) expect(r.stdout, 'what the program prints, against its output block').toBe(`${ex.output}\n`);
      });
    });
  });
});
