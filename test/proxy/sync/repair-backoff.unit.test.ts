import { describe, expect, it } from 'vitest';
import { FREE_REPAIRS, MAX_BACKOFF_MS, MIN_BACKOFF_MS, REPAIR_DEBOUNCE_MS, REPAIR_WINDOW_MS, RepairBackoff } from '../../../src/proxy/sync/repair-backoff.js';

describe('repair backoff', () => {
  it('repairs at once a few times, then doubles the delay up to its cap, and forgets after a quiet window', () => {
    const b = new RepairBackoff();
    let now = 0;
    for (let i = 0; i < FREE_REPAIRS; i++) expect(b.next((now += 100))).toBe(REPAIR_DEBOUNCE_MS);
    expect(b.backingOff).toBe(false);
    const delays = Array.from({ length: 8 }, () => b.next((now += 100)));
    expect(delays.slice(0, 3)).toEqual([MIN_BACKOFF_MS, 2 * MIN_BACKOFF_MS, 4 * MIN_BACKOFF_MS]);
    expect(Math.max(...delays)).toBe(MAX_BACKOFF_MS);
    expect(b.backingOff).toBe(true);
    expect(b.next((now += REPAIR_WINDOW_MS))).toBe(REPAIR_DEBOUNCE_MS);
    expect(b.backingOff).toBe(false);
  });
});
