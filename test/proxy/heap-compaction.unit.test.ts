import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
