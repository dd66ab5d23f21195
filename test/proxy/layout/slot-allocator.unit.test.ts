// SlotAllocator: an adopted group placed again with the same endpoints (new objects, as after a
// restart) keeps every slot; a changed one moves as few as possible; duplicates count once. The
// bucket size: by the state's shape for an empty table, the table's own once it holds groups.

import { describe, expect, it } from 'vitest';
import { bucketSizeFor, SlotAllocator, SLOTS_PER_CHAIN } from '../../../src/proxy/layout/slots/allocator.js';

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

  it('a new group takes the lowest free member of the lowest bucket with one, whatever was freed and adopted before', () => {
    const a = new SlotAllocator(4);
    const where = (g: string): [number, number] => {
      const p = a.place(g, [ep('198.18.0.1')]);
      return [p.bucket, p.base / SLOTS_PER_CHAIN];
    };
    expect(['g0', 'g1', 'g2', 'g3', 'g4'].map(where)).toEqual([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]]);
    a.release('g2');
    a.release('g1');
    expect(where('n1')).toEqual([0, 1]);
    expect(where('n2')).toEqual([0, 2]);
    expect(where('n3')).toEqual([1, 1]);
    // An adopted member is taken: the next new group skips it.
    a.adopt('kept', 1, 2, [ep('198.18.0.9')]);
    expect(where('n4')).toEqual([1, 3]);
    a.release('g0');
    a.release('n4');
    expect(where('n5')).toEqual([0, 0]);
    expect(where('n6')).toEqual([1, 3]);
    expect(where('n7')).toEqual([2, 0]);
  });

  it('fills a missing slot and the holes, and counts a duplicate once', () => {
    const a = new SlotAllocator();
    a.adopt('svc-a', 0, 0, [ep('198.18.0.1'), undefined, ep('198.18.0.3')]);
    expect(ips(a.place('svc-a', [ep('198.18.0.1'), ep('198.18.0.2'), ep('198.18.0.3')]).order)).toEqual(['198.18.0.1', '198.18.0.2', '198.18.0.3']);
    expect(ips(a.place('svc-a', [ep('198.18.0.3'), ep('198.18.0.3'), ep('198.18.0.1')]).order)).toEqual(['198.18.0.1', '198.18.0.3']);
  });

  it('over random churn, small groups and large: endpoints inside the new range keep their slots, the rest fill the holes in order', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const key = (e: { ip: string; port: number }): string => `${e.ip}|${e.port}`;
    for (const max of [6, 16, 30]) {
      const a = new SlotAllocator();
      let prev: { ip: string; port: number }[] = [];
      for (let step = 0; step < 300; step++) {
        // A new list of fresh objects (as an EndpointSlice update gives), with a duplicate now and then.
        const n = 1 + rand(max);
        const wanted = Array.from({ length: n }, () => ep(`198.18.0.${rand(40)}`, 8080 + rand(2)));
        if (rand(4) === 0) wanted.push({ ...wanted[0]! });
        const distinct = wanted.filter((e, i) => wanted.findIndex((o) => key(o) === key(e)) === i);
        const order = a.place('svc-a', wanted).order;
        expect(order.map(key).sort()).toEqual(distinct.map(key).sort());
        const wantedKeys = new Set(distinct.map(key));
        const kept = new Set<string>();
        for (let i = 0; i < Math.min(prev.length, order.length); i++) {
          if (wantedKeys.has(key(prev[i]!)) && !kept.has(key(prev[i]!))) {
            expect(key(order[i]!)).toBe(key(prev[i]!));
            kept.add(key(prev[i]!));
          }
        }
        const moved = order.filter((e) => !kept.has(key(e))).map(key);
        expect(moved).toEqual(distinct.map(key).filter((k) => !kept.has(k)));
        prev = [...order];
      }
    }
  });

  it('sizes an empty table\'s buckets by the state\'s shape: sqrt(1.3 x service ports / endpoints per port), the nearest power of two from 64 to 256', () => {
    const size = (servicePorts: number, perPort: number) => bucketSizeFor({ servicePorts, endpoints: servicePorts * perPort });
    expect(bucketSizeFor({ servicePorts: 0, endpoints: 0 })).toBe(64);
    expect(size(1000, 5)).toBe(64);
    expect(size(10_000, 5)).toBe(64);
    expect(size(30_000, 5)).toBe(64);
    expect(size(5000, 50)).toBe(64);
    expect(size(10_000, 1)).toBe(128);
    expect(size(100_000, 5)).toBe(128);
    expect(size(45_000, 1)).toBe(256);
    expect(size(1_000_000, 1)).toBe(256);
    // Service ports without endpoints count as one endpoint each.
    expect(bucketSizeFor({ servicePorts: 30_000, endpoints: 0 })).toBe(256);
  });

  it('a cold start fills buckets of the size for its state', () => {
    const a = new SlotAllocator();
    a.reset();
    a.sizeFromTable();
    expect(a.bucketSize).toBe(64);
    a.sizeForState({ servicePorts: 100_000, endpoints: 500_000 });
    expect(a.bucketSize).toBe(128);
    const placed = Array.from({ length: 129 }, (_, i) => a.place(`g${i}`, [ep('198.18.0.1')]));
    expect(placed[127]).toMatchObject({ bucket: 0, base: 127 * SLOTS_PER_CHAIN });
    expect(placed[128]).toMatchObject({ bucket: 1, base: 0 });
    // Once it holds groups, a later full plan's state changes nothing (a live proxy's next full sync).
    a.sizeForState({ servicePorts: 10_000, endpoints: 50_000 });
    expect(a.bucketSize).toBe(128);
  });

  it('a table that holds groups keeps the bucket size it was written with, whatever the state now: a restart moves nothing', () => {
    const a = new SlotAllocator();
    a.reset();
    // Written at 128 (its members reach 100), now a state that alone would take 64.
    a.adopt('high', 0, 100, [ep('198.18.0.1')]);
    a.adopt('low', 1, 3, [ep('198.18.0.2')]);
    a.sizeFromTable();
    a.sizeForState({ servicePorts: 10_000, endpoints: 50_000 });
    expect(a.bucketSize).toBe(128);
    expect(a.place('high', [ep('198.18.0.1')])).toMatchObject({ bucket: 0, base: 100 * SLOTS_PER_CHAIN });
    expect(a.compact()).toEqual([]);
    // Written at 64 (the size before tables were sized), now a state that alone would take 128: still 64.
    const b = new SlotAllocator();
    b.adopt('g', 0, 63, [ep('198.18.0.1')]);
    b.sizeFromTable();
    b.sizeForState({ servicePorts: 100_000, endpoints: 500_000 });
    expect(b.bucketSize).toBe(64);
    // A range beyond any bucket size is no range of ours: rebuilt (placed afresh).
    const c = new SlotAllocator();
    c.adopt('odd', 0, 256, [ep('198.18.0.1')]);
    c.sizeFromTable();
    expect(c.bucketSize).toBe(64);
    expect(c.place('odd', [ep('198.18.0.1')])).toMatchObject({ bucket: 0, base: 0 });
  });

  it('a size given keeps: neither the table nor the state changes it, and an adopted member beyond it is rebuilt', () => {
    const a = new SlotAllocator(4);
    a.adopt('beyond', 0, 4, [ep('198.18.0.1')]);
    a.sizeFromTable();
    expect(a.bucketSize).toBe(4);
    a.reset();
    a.sizeForState({ servicePorts: 100_000, endpoints: 500_000 });
    expect(a.bucketSize).toBe(4);
    expect(a.place('beyond', [ep('198.18.0.1')])).toMatchObject({ bucket: 0, base: 0 });
  });
});
