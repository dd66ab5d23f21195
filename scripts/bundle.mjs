// Bundles the programs nftlink runs as processes, after tsc has compiled src/ to dist/: each becomes
// one entry file in dist/bundle/ plus the chunks the entries share, with the npm dependencies left
// as imports (they load from node_modules as before).
//
// Why: Node 20 has no module compile cache, and its ES module loader costs about 0.4 ms per module
// (resolve, package scope lookup, compile). The library is 50 modules, so `import 'nftlink'` took
// 28 ms of every process's start; bundled, 10 ms. A tenth of a process that dumps a 100,000-element
// map goes there (npm run bench:load, case d). tsc's per-file output stays: the typings, the
// tests and the scripts in dist/ use it.
//
// Code that finds files of the package (the addon, bin/nftlink.js, the benchmark's children) does so
// from the package root (src/package-root.ts), so it works from either place.

import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Chunk names carry a content hash: start empty, or old chunks pile up.
rmSync(join(root, 'dist', 'bundle'), { recursive: true, force: true });

await build({
  absWorkingDir: root,
  entryPoints: {
    // The package's entry ("exports" in package.json).
    index: 'dist/index.js',
    // bin/nftlink.js.
    cli: 'dist/cli/main.js',
    // The benchmarks' measured processes (src/bench/cases.ts, src/bench/scale/cases.ts).
    'load-child': 'dist/bench/child.js',
    'scale-child': 'dist/bench/scale/child.js',
  },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
