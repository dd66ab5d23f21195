import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BIG_FULL_SYNC_SERVICE_PORTS, BIG_SYNC_OPERATIONS, COMPACTION_DELAY_MS, GROWTH_MAX_PAUSE_MS, GROWTH_MAX_TIME_SHARE, GROWTH_MIN_BYTES, GROWTH_MIN_INTERVAL_MS, GROWTH_SHARE, HeapCompaction, type Compacted } from '../../src/proxy/heap-compaction.js';

/** The executable's pages are the test worker's: not given back here (test/native/release-executable-pages). */
const noRelease = (): number => 0;

describe('HeapCompaction (one collection once idle after a big sync)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('gives back the executable\'s startup pages at the first collection only', () => {
    const release = vi.fn(() => 0);
    const logged: Compacted[] = [];
    const c = new HeapCompaction(() => {}, () => 0, (x) => logged.push(x), undefined, release);
    c.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, 10);
    vi.advanceTimersByTime(COMPACTION_DELAY_MS);
    c.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, 10);
    vi.advanceTimersByTime(COMPACTION_DELAY_MS);
    expect(logged).toHaveLength(2);
    expect(release).toHaveBeenCalledTimes(1);
    expect(logged.map((x) => 'executableReleasedMB' in x)).toEqual([true, false]);
  });

  it('collects once, a moment after a big sync, and not after small ones', () => {
    const collect = vi.fn();
    const c = new HeapCompaction(collect, undefined, undefined, undefined, noRelease);
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

  it('once every table is synced, collects when the RSS has grown too much since the first sync, then since the last collection', () => {
    const MB = 2 ** 20;
    const first = 150 * MB;
    const growth = Math.max(GROWTH_MIN_BYTES, GROWTH_SHARE * first);
    let rss = first;
    let clock = 0;
    const collectMs = 300;
    const collect = vi.fn(() => {
      clock += collectMs;
      rss = 140 * MB;
    });
    const logged: Compacted[] = [];
    const c = new HeapCompaction(collect, () => rss, (x) => logged.push(x), () => clock, () => 64 * MB);
    // The first sync sets where growth counts from.
    c.syncsDone();
    expect(collect).not.toHaveBeenCalled();

    // Grown up to the threshold: nothing. Beyond it: a collection there and then.
    rss = first + growth;
    c.syncsDone();
    expect(collect).not.toHaveBeenCalled();
    rss = first + growth + MB;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(1);
    // The first collection also gives back the executable's startup pages, and says how much.
    expect(logged).toEqual([{ reason: 'growth', durationMs: collectMs, rssBeforeMB: (first + growth + MB) / MB, rssAfterMB: 140, executableReleasedMB: 64 }]);

    // Grown again, from what the collection left: not within GROWTH_MIN_INTERVAL_MS of its end
    // (for a collection this short the interval decides, not the time share)...
    expect(collectMs / GROWTH_MAX_TIME_SHARE).toBeLessThanOrEqual(GROWTH_MIN_INTERVAL_MS);
    rss = 140 * MB + Math.max(GROWTH_MIN_BYTES, GROWTH_SHARE * 140 * MB) + MB;
    clock += GROWTH_MIN_INTERVAL_MS - 10;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(1);
    clock += 10;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(2);

    // A small process counts from GROWTH_MIN_BYTES, not from its share.
    rss = 140 * MB + GROWTH_MIN_BYTES;
    clock += GROWTH_MIN_INTERVAL_MS;
    expect(GROWTH_SHARE * 140 * MB).toBeLessThan(GROWTH_MIN_BYTES);
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('spaces those collections by their own duration (GROWTH_MAX_TIME_SHARE of the time), and leaves them to a big sync\'s own', () => {
    const MB = 2 ** 20;
    let clock = 0;
    let rss = 1000 * MB;
    const collectMs = GROWTH_MAX_PAUSE_MS;
    const collect = vi.fn(() => {
      clock += collectMs;
    });
    const c = new HeapCompaction(collect, () => rss, () => {}, () => clock, noRelease);
    c.syncsDone();
    rss = 2000 * MB;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(1);
    rss = 3000 * MB;
    clock += collectMs / GROWTH_MAX_TIME_SHARE - 10;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(1);
    clock += 10;
    // A big sync's collection is scheduled: that one runs, once the proxy is idle, not a second now.
    c.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, 100_000);
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(COMPACTION_DELAY_MS);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('stops while the last collection paused the proxy longer than GROWTH_MAX_PAUSE_MS (a heap of 100k services)', () => {
    const MB = 2 ** 20;
    let clock = 0;
    let rss = 1000 * MB;
    let collectMs = GROWTH_MAX_PAUSE_MS + 1;
    const collect = vi.fn(() => {
      clock += collectMs;
    });
    const c = new HeapCompaction(collect, () => rss, () => {}, () => clock, noRelease);
    c.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, 100_000);
    clock += COMPACTION_DELAY_MS;
    vi.advanceTimersByTime(COMPACTION_DELAY_MS);
    expect(collect).toHaveBeenCalledTimes(1);
    rss = 2000 * MB;
    clock += 3_600_000;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(1);
    // The next big sync's collection was quick enough: collections for growth resume.
    collectMs = GROWTH_MAX_PAUSE_MS;
    c.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, 100_000);
    clock += COMPACTION_DELAY_MS;
    vi.advanceTimersByTime(COMPACTION_DELAY_MS);
    expect(collect).toHaveBeenCalledTimes(2);
    rss = 3000 * MB;
    clock += collectMs / GROWTH_MAX_TIME_SHARE;
    c.syncsDone();
    expect(collect).toHaveBeenCalledTimes(3);
  });

  it('does nothing once stopped, or without an exposed gc()', () => {
    const collect = vi.fn();
    const c = new HeapCompaction(collect, undefined, undefined, undefined, noRelease);
    c.synced({ full: false, operations: BIG_SYNC_OPERATIONS }, 0);
    c.stop();
    vi.advanceTimersByTime(COMPACTION_DELAY_MS * 2);
    expect(collect).not.toHaveBeenCalled();
    const none = new HeapCompaction(undefined, undefined, undefined, undefined, noRelease);
    expect(() => none.synced({ full: true, operations: BIG_SYNC_OPERATIONS }, BIG_FULL_SYNC_SERVICE_PORTS)).not.toThrow();
  });
});

// In a process of its own, with --expose-gc and the CLI's young generation (bin/nftlink.js): a test
// worker's heap holds whatever other tests left in it.
const script = `
const { exposedGc } = await import(process.argv[1]);
const v8 = await import('node:v8');
const mb = (name) => v8.getHeapSpaceStatistics().find((s) => s.space_name === name).physical_space_size / 1e6;
// A heap as a big sync leaves it: tens of MB kept, as much again garbage, the young generation busy.
let kept = [], garbage = [];
for (let i = 0; i < 200000; i++) { const o = { key: [i, 'x' + i], value: [i] }; (i % 2 ? kept : garbage).push(o); }
garbage = undefined;
globalThis.gc();
const before = { young: mb('new_space'), old: mb('old_space') };
exposedGc()();
console.log(JSON.stringify({ before, after: { young: mb('new_space'), old: mb('old_space') }, kept: kept.length }));
`;

describe('the collection HeapCompaction runs', () => {
  it('gives back the empty young generation and the old generation\'s free pages, which a plain full collection keeps', () => {
    // The compiled module (npm run build:ts, as the CLI runs it).
    const module = fileURLToPath(new URL('../../dist/proxy/heap-compaction.js', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', '--max-semi-space-size=4', '--min-semi-space-size=4', '--input-type=module', '-e', script, module], { encoding: 'utf8' });
    const r = JSON.parse(out) as { before: { young: number; old: number }; after: { young: number; old: number } };
    // After the plain collection both semi-spaces stay committed (4 MB each here).
    expect(r.before.young).toBeGreaterThan(6);
    expect(r.after.young).toBeLessThan(2);
    expect(r.after.old).toBeLessThanOrEqual(r.before.old);
  });
});
