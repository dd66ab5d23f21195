// The slots layout's choice of affinity shape, as pure layout output: two rules and a pin chain
// where it can, kube-proxy's per-endpoint chains where it cannot (affinity.ts), and the pins' ids
// kept across syncs.

import { describe, expect, it } from 'vitest';
import { clusterIPServicePort } from '../../fixtures/proxy-model.js';
import { benchConfig } from '../../fixtures/scale-model.js';
import { AffinityPins } from '../../../src/proxy/layout/slots/affinity.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import type { ServiceEndpoint, ServicePort } from '../../../src/proxy/model/types.js';

const port = (name: string, ip: string, extra: Record<string, unknown> = {}): ServicePort =>
  clusterIPServicePort(name, ip, { sessionAffinity: 'ClientIP', ...extra }, 'ns');
const ep = (ip: string, isLocal = true): ServiceEndpoint => ({ ip, port: 8080, ready: true, serving: true, terminating: false, isLocal });
const chainNames = (o: ReturnType<SlotsLayout['service']>): string[] => o.chains.map((c) => c.chain.name.split('-')[0]!);

describe('slots layout affinity', () => {
  it('pins in two rules and a pin chain, with no chain or set per endpoint', () => {
    const layout = new SlotsLayout();
    const o = layout.service(benchConfig(), port('a', '198.18.200.1'), [ep('198.18.1.1'), ep('198.18.1.2')]);
    expect(chainNames(o).sort()).toEqual(['pin', 'service']);
    expect(o.sets).toEqual([]);
    const service = o.chains.find((c) => c.chain.name.startsWith('service-'))!;
    expect(service.rules).toHaveLength(2);
    expect(o.elements.get('affinity-endpoints')?.map((e) => e.key)).toEqual([
      ['198.18.1.1', 'tcp', 8080],
      ['198.18.1.2', 'tcp', 8080],
    ]);
    expect(layout.sharedSets(benchConfig()).map((s) => s.name)).toEqual(['endpoints-0', 'pins-0']);
  });

  it("falls back to kube-proxy's endpoint chains for an endpoint another affinity service pins to, and for Local policies", () => {
    const layout = new SlotsLayout();
    layout.service(benchConfig(), port('a', '198.18.200.1'), [ep('198.18.1.1')]);
    const shared = layout.service(benchConfig(), port('b', '198.18.200.2'), [ep('198.18.1.1'), ep('198.18.1.3')]);
    expect(chainNames(shared).sort()).toEqual(['endpoint', 'endpoint', 'service']);
    expect(shared.sets.map((s) => s.name.split('-')[0])).toEqual(['affinity', 'affinity']);
    const local = layout.service(benchConfig(), port('c', '198.18.200.3', { internalTrafficPolicy: 'Local' }), [ep('198.18.1.9')]);
    expect(chainNames(local)).toContain('endpoint');
  });

  it('pins at most 64 service chains in one map, whatever the bucket size (the kernel caps a map at 65,535 pins)', () => {
    const layout = new SlotsLayout(128);
    const pinMapOf = (o: ReturnType<SlotsLayout['service']>): string | undefined => {
      const pinned = o.chains.find((c) => c.chain.name.startsWith('service-'))!.rules[0]!;
      const lookup = pinned.exprs.find((e) => e.type === 'lookup');
      return lookup?.type === 'lookup' ? lookup.set : undefined;
    };
    const maps = Array.from({ length: 130 }, (_, i) => pinMapOf(layout.service(benchConfig(), port(`s${i}`, `198.18.200.${i}`), [ep(`198.18.${1 + (i >> 7)}.${i & 127}`)])));
    // Bucket 0's members 0-63 in the bucket's own map (as with buckets of 64), 64-127 in the next; bucket 1's first in its own.
    expect(new Set(maps.slice(0, 64))).toEqual(new Set(['pins-0']));
    expect(new Set(maps.slice(64, 128))).toEqual(new Set(['pins-1000000']));
    expect(new Set(maps.slice(128))).toEqual(new Set(['pins-1']));
    expect(layout.sharedSets(benchConfig()).map((s) => s.name)).toEqual(['endpoints-0', 'endpoints-1', 'pins-0', 'pins-1', 'pins-1000000']);
  });

  it('keeps a service port id across syncs, and a new id for a new service port', () => {
    const layout = new SlotsLayout();
    const id = (o: ReturnType<SlotsLayout['service']>): string => JSON.stringify(o.chains.find((c) => c.chain.name.startsWith('pin-'))!.rules[0]!.exprs.find((e) => e.type === 'immediate'));
    const a = port('a', '198.18.200.1');
    const first = id(layout.service(benchConfig(), a, [ep('198.18.1.1')]));
    expect(id(layout.service(benchConfig(), a, [ep('198.18.1.1'), ep('198.18.1.2')]))).toBe(first);
    expect(id(layout.service(benchConfig(), port('b', '198.18.200.2'), [ep('198.18.1.5')]))).not.toBe(first);
  });
});

describe('slots affinity pins to delete', () => {
  it("names the pins of a lost endpoint, and every pin of a service port that is gone", () => {
    const pinsOf = new AffinityPins();
    const a = port('a', '198.18.200.1');
    const b = port('b', '198.18.200.2');
    const idA = pinsOf.place(a, 'service-a', 0, [ep('198.18.1.1'), ep('198.18.1.2')]);
    const idB = pinsOf.place(b, 'service-b', 0, [ep('198.18.1.5')]);
    expect(pinsOf.stalePins(benchConfig())).toEqual([]);
    pinsOf.place(a, 'service-a', 0, [ep('198.18.1.2')]);
    const [lost] = pinsOf.stalePins(benchConfig());
    const pin = (id: number, ip: string) => ({ key: ['198.19.0.2', id], value: [ip, 8080] });
    expect(lost!.set.name).toBe('pins-0');
    expect([lost!.stale(pin(idA, '198.18.1.1')), lost!.stale(pin(idA, '198.18.1.2')), lost!.stale(pin(idB, '198.18.1.5'))]).toEqual([true, false, false]);
    pinsOf.release('service-b');
    const [gone] = pinsOf.stalePins(benchConfig());
    expect([gone!.stale(pin(idB, '198.18.1.5')), gone!.stale(pin(idA, '198.18.1.2'))]).toEqual([true, false]);
    expect(pinsOf.stalePins(benchConfig())).toEqual([]);
  });
});
