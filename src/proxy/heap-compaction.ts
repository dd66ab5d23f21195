// A full garbage collection once the proxy has settled after a big sync (a cold start, a restart's
// read-back, a repair of a flushed table). Such a sync leaves tens of MB of garbage in V8's old
// generation (the parsed objects, the transactions, the dump it compared against), and a proxy that
// then sits idle allocates too little for V8 to collect it: without this the heap stays where the
// sync left it, at 10k services about twice what is alive. One collection at idle costs tens of
// milliseconds of one core, once per big sync, and returns that memory for as long as the proxy runs.
//
// It needs V8's gc() exposed: bin/nftlink.js starts node with --expose-gc. Without it (the library
// embedded in another program), this does nothing.
//
// The collection is V8's "last resort" one (gc's `flavor: 'last-resort'`, what a low-memory
// notification runs: full collections with the memory reducer's settings, repeated while they find
// more). A plain full collection leaves the young generation's pages committed (both semi-spaces,
// empty) and the old generation's free pages in place; this one gives both back, for a few hundred
// milliseconds of collection instead of a few, once per big sync while the proxy is idle. The
// figures: docs/decisions.md.
//
// It is followed by a trim of the C heap (the addon's trimMemory, glibc's malloc_trim): what the
// sync freed there stays in the RSS otherwise. A proxy idle after a 10k x 5 cold start held 194 MB,
// 180 MB after the trim, nearly all of it from glibc's arenas.

import { loadNative } from '../native/index.js';

/** How long after a big sync: after the cold start's background keying (family-sync.ts, 500 ms). */
export const COMPACTION_DELAY_MS = 1500;

/** A sync is big when it writes this many operations, or is a full one over this many service ports. */
export const BIG_SYNC_OPERATIONS = 5000;
export const BIG_FULL_SYNC_SERVICE_PORTS = 1000;

export class HeapCompaction {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly collect: (() => void) | undefined = exposedGc()) {}

  /** A table was synced: a big sync schedules a collection. */
  synced(sync: { full: boolean; operations: number }, servicePorts: number): void {
    const big = sync.operations >= BIG_SYNC_OPERATIONS || (sync.full && servicePorts >= BIG_FULL_SYNC_SERVICE_PORTS);
    if (!this.collect || !big) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.collect?.();
    }, COMPACTION_DELAY_MS);
    // A process that ends after its sync (--once) does not wait for it.
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** V8's gc() as --expose-gc gives it (its options: V8's gc extension). */
type ExposedGc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

/** The collection HeapCompaction runs: undefined without --expose-gc. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (typeof gc !== 'function') return undefined;
  return () => {
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    trimCHeap();
  };
}

/** The C heap's free pages back to the kernel; nothing when the addon cannot load (it then holds none). */
function trimCHeap(): void {
  try {
    loadNative().trimMemory();
  } catch {
    // No addon for this machine: the proxy could not have synced either.
  }
}
