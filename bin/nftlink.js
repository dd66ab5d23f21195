#!/usr/bin/env -S node --max-semi-space-size=8 --min-semi-space-size=8
// The CLI entry: runs the compiled TypeScript (npm run build). Exit codes: 0 ok, 1 failure, 2 usage.
//
// The V8 flags above fix the young generation at 2 x 8 MB. The proxy's heap is long-lived state (at
// 10k services, about 70 MB that every sync keeps), so a young generation that grows to 2 x 16 MB
// only holds more garbage. Measured with `nftlink bench` (Node 20): peak RSS at 10k went from 188 to
// 166 MB, and sync time did not change. The image's entrypoint runs this file, and so does npm's
// link; the benchmark starts its measured processes with the same flags (src/bench/node-flags.ts).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
