#!/usr/bin/env -S node --max-semi-space-size=4 --min-semi-space-size=4 --v8-pool-size=1 --no-allocation-site-pretenuring --expose-gc
// The CLI entry: runs the compiled TypeScript, bundled (npm run build; scripts/bundle.mjs). Exit codes: 0 ok, 1 failure, 2 usage.
//
// The V8 flags above fix the young generation's semi-spaces at 4 MB. The proxy's heap is long-lived
// state (at 10k services, tens of MB that every sync keeps), so a young generation that grows
// larger only holds more garbage (with Node 24's default, about 100 MB more peak RSS at 10k
// services for a little less GC time). --v8-pool-size=1: one V8 background thread instead of
// node's four; on 2 cores the proxy's main thread and the addon's commit thread (the kernel's
// work) already want both. --no-allocation-site-pretenuring: V8 otherwise decides, code site by
// code site, to allocate in the old generation from then on when most of a site's objects survived
// a young collection. Whether it so decides in a cold start depends on where V8's own full
// collections fall, which a busy machine moves; when it did, the sync's short-lived objects from
// those sites piled up until the next full collection, and a long-running proxy's first sync at
// 10k services peaked at 200-210 MB instead of 175. --expose-gc: the proxy collects once when it
// goes idle after a big sync (src/proxy/heap-compaction.ts). The measurements: docs/decisions.md.
// The image's entrypoint runs this file, and so does npm's link; the benchmarks start their
// measured processes with the same flags (bench/node-flags.ts).
//
// The compile cache: V8's compiled code of the bundle is kept on disk (in the system's temporary
// directory, or NODE_COMPILE_CACHE; keyed by the file's content and node's version) and reused by the
// next start, which then spends about 30 ms less before it reads its first object. Enabled before
// the bundle is imported, hence the dynamic import. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
// Its directory is made here first, without recursion, and the cache used only when it exists:
// Node 24.22 spins forever creating it when the parent answers ENOENT to mkdir (a TMPDIR under
// /proc), where a plain mkdir fails at once. A directory that cannot be made (a read-only root
// filesystem) only means no cache.
import { mkdirSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const compileCache = process.env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache');
try {
  mkdirSync(compileCache);
  enableCompileCache(compileCache);
} catch (err) {
  if (err.code === 'EEXIST') enableCompileCache(compileCache);
}
const { main } = await import('../dist/bundle/cli.js');

process.exitCode = await main(process.argv.slice(2));
