// The slots layout's shared sets (its bucket maps in use, the pins maps of buckets with affinity,
// and the balance maps of ports reached through their ClusterIP alone) are asked for at every
// sync: the same answer, the very same array, while the buckets in use stay; a new one as soon as
// a bucket is first used or emptied (SlotAllocator's and AffinityPins' versions). The planner skips
// its pass over them while it gets the same array. So do its shared chains.

import { describe, expect, it } from 'vitest';
import { clusterIPServicePort } from '../../fixtures/proxy-model.js';
import { benchConfig } from '../../fixtures/scale-model.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import type { ServiceEndpoint } from '../../../src/proxy/model/types.js';

const ep = (ip: string): ServiceEndpoint => ({ ip, port: 8080, ready: true, serving: true, terminating: false, isLocal: true });
const names = (layout: SlotsLayout): string[] => layout.sharedSets(benchConfig()).map((s) => s.name);

describe('slots layout shared sets', () => {
  it('are the same array while the buckets in use stay, and follow a bucket first used or emptied', () => {
    // Two service chains per bucket; external IPs give each port a service chain and a slot range.
    const layout = new SlotsLayout(2);
    const cfg = benchConfig();
    const ext = (ip: string) => ({ externalIPs: [ip] });
    const a = clusterIPServicePort('a', '198.18.200.1', ext('198.18.201.1'), 'ns');
    const b = clusterIPServicePort('b', '198.18.200.2', ext('198.18.201.2'), 'ns');
    const c = clusterIPServicePort('c', '198.18.200.3', ext('198.18.201.3'), 'ns');
    layout.service(cfg, a, [ep('198.19.1.1')]);
    layout.service(cfg, b, [ep('198.19.1.2')]);
    const first = layout.sharedSets(cfg);
    expect(first.map((s) => s.name)).toEqual(['endpoints-0']);
    // An endpoint replaced, one added: the same bucket.
    layout.service(cfg, a, [ep('198.19.1.3'), ep('198.19.1.4')]);
    expect(layout.sharedSets(cfg)).toBe(first);
    // A third service chain takes the next bucket.
    layout.service(cfg, c, [ep('198.19.1.5')]);
    expect(names(layout)).toEqual(['endpoints-0', 'endpoints-1']);
    // Its bucket emptied: gone from the answer.
    layout.release(c.id);
    expect(names(layout)).toEqual(['endpoints-0']);
    // Affinity on a service already placed adds its bucket's pins map, with no bucket newly used.
    const before = layout.sharedSets(cfg);
    layout.service(cfg, clusterIPServicePort('a', '198.18.200.1', { sessionAffinity: 'ClientIP', ...ext('198.18.201.1') }, 'ns'), [ep('198.19.1.3'), ep('198.19.1.4')]);
    expect(names(layout)).toEqual(['endpoints-0', 'pins-0']);
    expect(layout.sharedSets(cfg)).not.toBe(before);
  });

  it('add a balance map for ports reached through their ClusterIP alone, and the chains follow the endpoint counts', () => {
    const layout = new SlotsLayout(2);
    const cfg = benchConfig();
    const d = clusterIPServicePort('d', '198.18.200.4', {}, 'ns');
    const e = clusterIPServicePort('e', '198.18.200.5', {}, 'ns');
    const chains = (): string[] => layout.sharedChains(cfg).map((c) => c.chain.name);
    layout.service(cfg, d, [ep('198.19.1.6')]);
    layout.service(cfg, e, [ep('198.19.1.7')]);
    const sets = layout.sharedSets(cfg);
    expect(sets.map((s) => s.name)).toEqual(['balance-0']);
    const one = layout.sharedChains(cfg);
    expect(chains()).toEqual(['balance-0-tcp-1']);
    // An endpoint replaced: the same map, the same chains, the same arrays.
    layout.service(cfg, d, [ep('198.19.1.8')]);
    expect(layout.sharedSets(cfg)).toBe(sets);
    expect(layout.sharedChains(cfg)).toBe(one);
    // One of them grows: a chain for 2, and the one for 1 stays while the other port uses it.
    layout.service(cfg, d, [ep('198.19.1.8'), ep('198.19.1.9')]);
    expect(layout.sharedSets(cfg)).toBe(sets);
    expect(chains().sort()).toEqual(['balance-0-tcp-1', 'balance-0-tcp-2']);
    // Both gone: no map, no chain.
    layout.release(d.id);
    layout.release(e.id);
    expect(names(layout)).toEqual([]);
    expect(chains()).toEqual([]);
  });
});
