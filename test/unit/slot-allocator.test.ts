// SlotAllocator: an adopted group placed again with the same endpoints (new objects, as after a
// restart) keeps every slot; a changed one moves as few as possible; duplicates count once.

import { describe, expect, it } from 'vitest';
import { SlotAllocator, SLOTS_PER_CHAIN } from '../../src/proxy/layout/slots/allocator.js';

const ep = (ip: string, port = 8080) => ({ ip, port });
const ips = (order: readonly { ip: string }[]): string[] => order.map((e) => e.ip);

describe('SlotAllocator', () => {
  it('keeps an adopted group as the kernel holds it when the endpoints are the same', () => {
    const a = new SlotAllocator();
    a.adopt('svc-a', 2, 5, [ep('198.18.0.2'), ep('198.18.0.1')]);
    const model = [ep('198.18.0.2'), ep('198.18.0.1')];
    const p = a.place('svc-a', model);
    expect(p).toMatchObject({ bucket: 2, base: 5 * SLOTS_PER_CHAIN });
    expect(ips(p.order)).toEqual(['198.18.0.2', '198.18.0.1']);
    // The model's objects, not the adopted ones.
    expect(p.order[0]).toBe(model[0]);
  });

  it('in another order, every endpoint keeps its slot', () => {
    const a = new SlotAllocator();
    a.adopt('svc-a', 0, 0, [ep('198.18.0.2'), ep('198.18.0.1')]);
    expect(ips(a.place('svc-a', [ep('198.18.0.1'), ep('198.18.0.2')]).order)).toEqual(['198.18.0.2', '198.18.0.1']);
  });

  it('fills a missing slot and the holes, and counts a duplicate once', () => {
    const a = new SlotAllocator();
    a.adopt('svc-a', 0, 0, [ep('198.18.0.1'), undefined, ep('198.18.0.3')]);
    expect(ips(a.place('svc-a', [ep('198.18.0.1'), ep('198.18.0.2'), ep('198.18.0.3')]).order)).toEqual(['198.18.0.1', '198.18.0.2', '198.18.0.3']);
    expect(ips(a.place('svc-a', [ep('198.18.0.3'), ep('198.18.0.3'), ep('198.18.0.1')]).order)).toEqual(['198.18.0.1', '198.18.0.3']);
  });
});
