// What the start of a proxy's first sync leaves behind, collected once: a `--once` run's change
// tracker lets go of everything it read once the state is built (ChangeTracker.forget), and a
// long-running proxy's first lists (the API's answers, the manifest reader's scan) are garbage by
// then. V8 would collect it at its next full collection, which at 100k services comes late in the
// sync, the heap meanwhile growing past it (docs/decisions.md). So the Proxier collects where a
// pause holds up least (FamilySync.sync's atPause).
//
// In a restart that collection is on the JavaScript thread's critical path (nothing else runs while
// it compares the table it read), and V8 has often run a full collection of its own by then: the
// read and the comparison allocate as much as the state again. So a restart collects only when V8
// has not (node's GCProfiler watches from the moment the garbage was let go). A cold start always
// collects: the pause overlaps its first part's commit.

import { GCProfiler } from 'node:v8';
import type { ExposedGc } from './heap-compaction.js';

/** One plain full collection, now. Nothing without --expose-gc. */
function collectReleased(): void {
  (globalThis as { gc?: ExposedGc }).gc?.({ type: 'major', execution: 'sync' });
}

/** Garbage let go now, to be collected at the sync's pause (collect()); undefined without --expose-gc. */
export class ReleasedGarbage {
  private readonly profiler = new GCProfiler();
  private watching = true;

  static now(): ReleasedGarbage | undefined {
    return typeof (globalThis as { gc?: unknown }).gc === 'function' ? new ReleasedGarbage() : undefined;
  }

  private constructor() {
    this.profiler.start();
  }

  /** Collects it; `unlessCollected`: not if V8 has run a full collection since it was let go. */
  collect(unlessCollected: boolean): void {
    const collected = this.end();
    if (!unlessCollected || !collected) collectReleased();
  }

  /** Stops watching; whether V8 ran a full collection meanwhile. */
  end(): boolean {
    if (!this.watching) return false;
    this.watching = false;
    return this.profiler.stop()?.statistics.some((s) => s.gcType === 'MarkSweepCompact') ?? false;
  }
}
