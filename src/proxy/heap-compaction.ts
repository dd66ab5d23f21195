// A full garbage collection once the proxy has settled after a big sync (a cold start, a restart's
// read-back, a repair of a flushed table). Such a sync leaves tens of MB of garbage in V8's old
// generation (the parsed objects, the transactions, the dump it compared against), and a proxy that
// then sits idle allocates too little for V8 to collect it: without this the heap stays where the
// sync left it, at 10k services about twice what is alive. One collection at idle, once per big
// sync, returns that memory for as long as the proxy runs.
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
// Under steady churn there is no idle moment after a big sync, and V8 keeps growing its old
// generation (at 10k x 5 under informer churn: 84 MB committed for 76 MB in use, 111 MB for 80
// 100 s later) rather than give back the pages its full collections leave partly free. So once
// every table is synced, the proxy compares its RSS with what the last collection left (or, before
// any, with the first sync's), and when it has grown by more than a tenth (and more than 16 MB),
// runs the same collection there and then, between syncs: at most every 20 s, and rarely enough
// that these pauses take at most 2% of the time (the last one's duration decides: 0.2-0.5 s at 10k
// services). Not at all while the last collection paused the proxy for more than a second (2.7 s
// at 100k x 5): there a pause would stall syncs for longer than the memory is worth. Growth that
// is the proxy's own state (more services) costs one collection, which then measures from there.
// That bounds the RSS under churn, as Go's runtime bounds a Go proxy's by giving back its free
// pages in the background. The figures: docs/decisions.md.
//
// It is followed by a trim of the C heap (the addon's trimMemory, glibc's malloc_trim): what the
// sync freed there stays in the RSS otherwise. A proxy idle after a 10k x 5 cold start held 194 MB,
// 180 MB after the trim, nearly all of it from glibc's arenas.
//
// The first collection also hands back the pages of the node executable that starting up read (the
// addon's releaseExecutablePages: the bootstrap, the module loader, V8's and ICU's tables): about
// 50 MB of a started proxy's RSS is the executable's, and an idle proxy uses under a third of it
// again. Once: the pages later syncs touch come back and are used; giving them back at every
// collection would only read them again.

import { loadNative } from '../native/index.js';

/** How long after a big sync: after the cold start's background keying (family-sync.ts, 500 ms). */
export const COMPACTION_DELAY_MS = 1500;

/** A sync is big when it writes this many operations, or is a full one over this many service ports. */
export const BIG_SYNC_OPERATIONS = 5000;
export const BIG_FULL_SYNC_SERVICE_PORTS = 1000;

/** Once every table is synced, a collection runs when the RSS has grown by more than this share... */
export const GROWTH_SHARE = 0.1;
/** ...and more than this, since the last collection (or the first sync)... */
export const GROWTH_MIN_BYTES = 16 * 2 ** 20;
/** ...at most this often... */
export const GROWTH_MIN_INTERVAL_MS = 20_000;
/** ...and at most this share of the time (the last collection's duration / the interval)... */
export const GROWTH_MAX_TIME_SHARE = 0.02;
/** ...and not at all while the last collection paused the proxy longer than this. */
export const GROWTH_MAX_PAUSE_MS = 1000;

/** Why a collection ran, and what it did (for the proxy's debug log). */
export interface Compacted {
  reason: 'big-sync' | 'growth';
  durationMs: number;
  rssBeforeMB: number;
  rssAfterMB: number;
  /** The first collection's: the executable's read-only mappings given back (MB of address range). */
  executableReleasedMB?: number;
}

export class HeapCompaction {
  private timer: NodeJS.Timeout | undefined;
  /** When the last collection ended, how long it took, and the RSS it left (bytes). */
  private lastEnd = -Infinity;
  private lastDurationMs = 0;
  private baselineRss: number | undefined;
  private executableReleased = false;

  constructor(
    private readonly collect: (() => void) | undefined = exposedGc(),
    private readonly rss: () => number = () => process.memoryUsage.rss(),
    private readonly onCompacted: (c: Compacted) => void = () => {},
    private readonly now: () => number = () => performance.now(),
    private readonly releaseExecutable: () => number = releaseExecutablePages,
  ) {}

  /** A table was synced: a big sync schedules a collection once the proxy is idle. */
  synced(sync: { full: boolean; operations: number }, servicePorts: number): void {
    const big = sync.operations >= BIG_SYNC_OPERATIONS || (sync.full && servicePorts >= BIG_FULL_SYNC_SERVICE_PORTS);
    if (!this.collect || !big) return;
    // Another big sync meanwhile moves the collection after it.
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run('big-sync');
    }, COMPACTION_DELAY_MS);
    // A process that ends after its sync (--once) does not wait for it.
    this.timer.unref?.();
  }

  /**
   * Every table is synced, and the next sync cannot start before this returns: collects now if the
   * RSS has grown too much (see the file comment). Here, and not on a timer, so that the pause
   * never falls inside a sync (its duration, its latency metrics); a sync due meanwhile waits for it.
   */
  syncsDone(): void {
    if (!this.collect || this.timer || this.lastDurationMs > GROWTH_MAX_PAUSE_MS) return;
    if (this.now() - this.lastEnd < Math.max(GROWTH_MIN_INTERVAL_MS, this.lastDurationMs / GROWTH_MAX_TIME_SHARE)) return;
    const rss = this.rss();
    if (this.baselineRss === undefined) this.baselineRss = rss;
    else if (rss - this.baselineRss > Math.max(GROWTH_MIN_BYTES, GROWTH_SHARE * this.baselineRss)) this.run('growth', rss);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(reason: Compacted['reason'], before = this.rss()): void {
    const t0 = this.now();
    this.collect?.();
    let released: number | undefined;
    if (!this.executableReleased) {
      this.executableReleased = true;
      released = this.releaseExecutable();
    }
    this.lastEnd = this.now();
    this.lastDurationMs = this.lastEnd - t0;
    this.baselineRss = this.rss();
    const c: Compacted = { reason, durationMs: this.lastDurationMs, rssBeforeMB: before / 2 ** 20, rssAfterMB: this.baselineRss / 2 ** 20 };
    if (released !== undefined) c.executableReleasedMB = released / 2 ** 20;
    this.onCompacted(c);
  }
}

/** V8's gc() as --expose-gc gives it (its options: V8's gc extension). */
export type ExposedGc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

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

/** The executable's startup pages back to the kernel (see the file comment); 0 without the addon. */
function releaseExecutablePages(): number {
  try {
    return loadNative().releaseExecutablePages();
  } catch {
    return 0;
  }
}
