// Where nftlink's own files are: the package root is the nearest directory above this module that
// holds a package.json. Files are found from there, not relative to the importing module, because
// the same code runs from dist/<layer>/*.js (tsc's output, which the tests and the library's
// typings use) and from the bundles in dist/bundle/ (what the CLI and the benchmark's measured
// processes run: scripts/bundle.mjs).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); ; ) {
    if (existsSync(join(dir, 'package.json'))) return (root = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`nftlink: cannot find the package root (no package.json above ${here})`);
    dir = parent;
  }
}

/** A file of the package, by its path from the root: packagePath('bin', 'nftlink.js'). */
export function packagePath(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}

/** The package's version (package.json), for --version. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
}
