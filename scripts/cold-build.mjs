// One cold build of a benchmark ruleset, no kernel: imports the builder from a compiled tree
// (`dist-bench`, or `dist` of a revision from before bench/ left src/), builds shape S of `npm run bench:load` case (b), or with --elements N
// case (a)'s load of N elements into the concatenated map, and prints the wall time and the
// process's CPU time of the build alone as JSON. The CPU time counts V8's background
// threads too, whose TurboFan compiles are a third of a cold build's user time (Node 20).
//
//   node scripts/cold-build.mjs DIST [--shape 5] [--services 10000] [--endpoints 5]
//   node scripts/cold-build.mjs DIST --elements 100000
//
// scripts/ab-build.sh runs it for two revisions, alternating.

import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const [dist, ...rest] = process.argv.slice(2);
if (!dist) throw new Error('usage: node scripts/cold-build.mjs DIST [--shape S] [--services N] [--endpoints E] | [--elements N]');
const option = (name, fallback) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? Number(rest[i + 1]) : fallback;
};
const { serviceShape, bigMapLoad } = await import(pathToFileURL(resolve(dist, 'bench/shapes.js')).href);
const elements = option('elements', 0);
const before = process.cpuUsage();
const t0 = performance.now();
const txs = elements > 0 ? [bigMapLoad(elements)] : serviceShape(option('shape', 5), { services: option('services', 10_000), endpoints: option('endpoints', 5) });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(before);
const encodedBytes = txs.reduce((sum, tx) => sum + tx.encodedSize, 0);
console.log(JSON.stringify({ wallMs, userMs: cpu.user / 1000, sysMs: cpu.system / 1000, encodedBytes }));
