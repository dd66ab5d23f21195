// Bundles the programs nftlink runs as processes, after tsc has compiled them: each becomes one
// entry file in <out>/bundle/ plus the chunks the entries share, with the npm dependencies left as
// imports (they load from node_modules as before).
//   node scripts/bundle.mjs           the product, from dist/ (npm run build:ts)
//   node scripts/bundle.mjs --bench   the benchmarks' measured processes, from dist-bench/ (npm run
//                                     build:bench): the product code inside them is bundled just as
//                                     the product's own, so they measure nftlink as it ships
//
// Why: Node 20 has no module compile cache, and its ES module loader costs about 0.4 ms per module
// (resolve, package scope lookup, compile). The library is 50 modules, so `import 'nftlink'` took
// 28 ms of every process's start; bundled, 10 ms. A process that dumps a 100,000-element map spends
// a tenth of its time there (npm run bench:load, case d).
//
// Rollup, not esbuild: esbuild turns every top-level `const` into `var`, and V8 then can no longer
// treat those bindings as constants in optimized code (building the 100,000 elements of case a
// took 88 ms instead of 58). Rollup keeps the code as tsc wrote it.
//
// Code that finds files of the package (the addon, bin/nftlink.js, the benchmark's children) does so
// from the package root (src/package-root.ts), so it works from either place.

import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bench = process.argv.includes('--bench');
const out = (p) => join(root, bench ? 'dist-bench' : 'dist', p);

// Each build: entry name -> compiled module. The library's and the CLI's are separate builds, so the
// library's chunks hold only library code: the npm package ships those (package.json "files"), and
// the CLI's (which reach the proxy and its dependencies) stay in the checkout and the image.
const builds = bench
  ? [
      {
        input: {
          // The benchmarks' measured processes (bench/cases.ts, bench/scale/cases.ts, bench/process/cases.ts).
          'load-child': out('bench/child.js'),
          'scale-child': out('bench/scale/child.js'),
          // The floor of `npm run bench:process` (bench/process/floor-child.ts).
          'process-floor': out('bench/process/floor-child.js'),
        },
        chunks: 'chunks',
      },
    ]
  : [
      {
        input: {
          // The package's entry ("exports" in package.json).
          index: out('index.js'),
          // "nftlink/testing": FakeNftables, for the tests of programs that use the library.
          testing: out('testing/index.js'),
        },
        chunks: 'chunks',
      },
      // bin/nftlink.js.
      { input: { cli: out('cli/main.js') }, chunks: 'cli-chunks' },
    ];

// Chunk names carry a content hash: start empty, or old chunks pile up.
rmSync(out('bundle'), { recursive: true, force: true });

for (const { input, chunks } of builds) {
  const bundle = await rollup({
    input,
    // Our modules are relative imports; everything else (node:*, npm packages) stays an import.
    external: (id, importer) => importer !== undefined && !id.startsWith('.') && !id.startsWith('/'),
    onwarn(warning, warn) {
      // tsc's output has no circular-import or eval hazards worth failing for, but say anything else.
      if (warning.code !== 'CIRCULAR_DEPENDENCY') warn(warning);
    },
  });
  await bundle.write({ dir: out('bundle'), format: 'es', chunkFileNames: `${chunks}/[name]-[hash].js` });
  await bundle.close();
}
