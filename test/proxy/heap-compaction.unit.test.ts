import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BIG_FULL_SYNC_SERVICE_PORTS, BIG_SYNC_OPERATIONS, COMPACTION_DELAY_MS, HeapCompaction } from '../../src/proxy/heap-compaction.js';

describe('HeapCompaction (one collection once idle after a big sync)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('collects once, a moment after a big sync, and not after small ones', () => {
    const collect = vi.fn();
    const c = new HeapCompaction(collect);
    c.synced({ full: false, operations: 10 }, 10_000);
    c.synced({ full: true, operations: 0 }, BIG_FULL_SYNC_SERVICE_PORTS - 1);
    vi.advanceTimersByTime(COMPACTION_DELAY_MS * 2);
    expect(collect).not.toHaveBeenCalled();

    c.synced({ full: false, operations: BIG_SYNC_OPERATIONS }, 10);
    vi.advanceTimersByTime(COMPACTION_DELAY_MS - 1);
    expect(collect).not.toHaveBeenCalled();
    // Another big sync meanwhile moves the collection after it: one collection, not two.
    c.synced({ full: true, operations: 0 }, BIG_FULL_SYNC_SERVICE_PORTS);
    vi.advanceTimersByTime(COMPACTION_DELAY_MS);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('does nothing once stopped, or without an exposed gc()', () => {
    const collect = vi.fn();
    const c = new HeapCompaction(collect);
    c.synced({ full: false, operations: BIG_SYNC_OPERATIONS }, 0);
    c.stop();
    vi.advanceTimersByTime(COMPACTION_DELAY_MS * 2);
    expect(collect).not.toHaveBeenCalled();
    const none = new HeapCompaction(undefined);
    expect(() => none.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, BIG_FULL_SYNC_SERVICE_PORTS)).not.toThrow();
  });
});
