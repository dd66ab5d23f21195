import { describe, expect, it } from 'vitest';
import { FREE_REPAIRS, MAX_BACKOFF_MS, MIN_BACKOFF_MS, REPAIR_DEBOUNCE_MS, REPAIR_WINDOW_MS, RepairBackoff } from '../../../src/proxy/sync/repair-backoff.js';

describe('repair backoff', () => {
  /** A writer that undoes every repair `after` ms after it: the delays it gets, one per change. */
  function fight(b: RepairBackoff, changes: number, after: number, start = 0): { delays: number[]; now: number } {
    let now = start;
    const delays: number[] = [];
    for (let i = 0; i < changes; i++) {
      const d = b.next(now);
      delays.push(d);
      now += d + after;
    }
    return { delays, now };
  }

  it('repairs at once a few times, then doubles the delay up to its cap, and keeps it there while the fight goes on', () => {
    const b = new RepairBackoff();
    const { delays, now } = fight(b, 40, 100);
    expect(delays.slice(0, FREE_REPAIRS)).toEqual(Array(FREE_REPAIRS).fill(REPAIR_DEBOUNCE_MS));
    expect(delays.slice(FREE_REPAIRS, FREE_REPAIRS + 3)).toEqual([MIN_BACKOFF_MS, 2 * MIN_BACKOFF_MS, 4 * MIN_BACKOFF_MS]);
    // Delays longer than the window do not reset it: the writer undid each repair at once.
    expect(delays.slice(-20)).toEqual(Array(20).fill(MAX_BACKOFF_MS));
    expect(b.backingOff).toBe(true);
    // A change a whole window after the last repair: the fight is over, repairs are immediate again.
    expect(b.next(now - 100 + REPAIR_WINDOW_MS)).toBe(REPAIR_DEBOUNCE_MS);
    expect(b.backingOff).toBe(false);
  });

  it('a writer that comes back within the window after a delayed repair stays backed off', () => {
    const b = new RepairBackoff();
    const { now } = fight(b, FREE_REPAIRS + 4, 100);
    expect(b.backingOff).toBe(true);
    expect(b.next(now - 100 + REPAIR_WINDOW_MS - 1)).toBe(16 * MIN_BACKOFF_MS);
  });

  it('changes spread wider than the window never back off', () => {
    const b = new RepairBackoff();
    const { delays } = fight(b, 20, REPAIR_WINDOW_MS / FREE_REPAIRS + 1);
    expect(new Set(delays)).toEqual(new Set([REPAIR_DEBOUNCE_MS]));
  });
});
