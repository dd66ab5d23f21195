#!/usr/bin/env -S node --max-semi-space-size=8 --min-semi-space-size=8 --v8-pool-size=1
// The CLI entry: runs the compiled TypeScript, bundled (npm run build; scripts/bundle.mjs). Exit codes: 0 ok, 1 failure, 2 usage.
//
// The V8 flags above fix the young generation at 2 x 4 MB. The proxy's heap is long-lived state (at
// 10k services, about 55 MB that every sync keeps), so a young generation that grows to 2 x 16 MB
// only holds more garbage. Measured on 10k services x 5 (Node 20, medians of 5): peak RSS 167 MB
// with the defaults, 152 MB at 2 x 8 MB, 146 MB at 2 x 4 MB; the sync took 0.63-0.67 s in all
// three. --v8-pool-size=1: one V8 background thread (GC marking and sweeping, optimizing compiles)
// instead of node's default four. On 2 cores the proxy's main thread and the addon's commit thread (the
// kernel's work) already want both; four V8 helpers took 0.78 s of CPU during a 10k cold start
// (perf, per thread). Measured alternately (medians): 10k cold start 752 -> 727 ms (6 runs), 30k
// 1751 -> 1657 ms (3), 10k restart 954 -> 918 ms (4), churn unchanged or better, RSS unchanged.
// The image's entrypoint runs this file, and so does npm's link; the benchmark starts its
// measured processes with the same flags (src/bench/node-flags.ts).
import { main } from '../dist/bundle/cli.js';

process.exitCode = await main(process.argv.slice(2));
