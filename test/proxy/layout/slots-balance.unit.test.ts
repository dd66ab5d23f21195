// Where the slots layout puts the endpoints of a port reached through its ClusterIP alone
// (src/proxy/layout/slots/balance.ts): a pure function of the model, so that a restart computes
// what the kernel holds without reading the balance maps' elements back. These pin the function's
// properties the restart relies on; the kernel tests (slots-layout.kernel.test.ts) show a restart
// writing nothing.

import { describe, expect, it } from 'vitest';
import { clusterIPServicePort } from '../../fixtures/proxy-model.js';
import { benchConfig } from '../../fixtures/scale-model.js';
import { BALANCE_MAP_ELEMENTS, balanceBucketOf, balanceMapsFor, balanceOrder, BalanceGroups, MAX_BALANCE_MAPS } from '../../../src/proxy/layout/slots/balance.js';
import type { ServiceEndpoint } from '../../../src/proxy/model/types.js';
import type { NftSet, SetElement } from '../../../src/nft/index.js';

const ep = (ip: string, port = 8080): ServiceEndpoint => ({ ip, port, ready: true, serving: true, terminating: false, isLocal: true });
const spell = (eps: readonly ServiceEndpoint[]): string[] => eps.map((e) => `${e.ip}:${e.port}`);

describe('slots balance maps', () => {
  it('number a port’s endpoints in sorted order (address text, then port), each once, whatever order they come in', () => {
    const eps = [ep('198.19.0.9'), ep('198.19.0.10'), ep('198.19.0.9', 80), ep('198.19.0.2'), ep('198.19.0.10')];
    expect(spell(balanceOrder(eps))).toEqual(['198.19.0.10:8080', '198.19.0.2:8080', '198.19.0.9:80', '198.19.0.9:8080']);
    expect(spell(balanceOrder([...eps].reverse()))).toEqual(spell(balanceOrder(eps)));
    // Past the insertion sort's handful: the same order.
    const many = Array.from({ length: 40 }, (_, i) => ep(`198.19.1.${(i * 7) % 40}`, 8080 + (i % 3)));
    const twice = [...many, ...many.slice(0, 10)];
    const sorted = spell(many).sort((a, b) => {
      const [ai, ap] = a.split(':');
      const [bi, bp] = b.split(':');
      return ai! < bi! ? -1 : ai! > bi! ? 1 : Number(ap) - Number(bp);
    });
    expect(spell(balanceOrder(twice))).toEqual(sorted);
  });

  it('count maps by the endpoints, a power of two from 1 to the maximum', () => {
    expect(balanceMapsFor({ servicePorts: 0, endpoints: 0 })).toBe(1);
    expect(balanceMapsFor({ servicePorts: 400, endpoints: BALANCE_MAP_ELEMENTS })).toBe(1);
    expect(balanceMapsFor({ servicePorts: 401, endpoints: BALANCE_MAP_ELEMENTS + 1 })).toBe(2);
    expect(balanceMapsFor({ servicePorts: 10_000, endpoints: 50_000 })).toBe(32);
    expect(balanceMapsFor({ servicePorts: 5_000, endpoints: 250_000 })).toBe(128);
    expect(balanceMapsFor({ servicePorts: 1_000_000, endpoints: 5_000_000 })).toBe(MAX_BALANCE_MAPS);
  });

  it('put a port in the same map among half as many maps, halved: a table read back with its top maps empty keeps every port in place', () => {
    const spread = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const address = `198.18.${i >> 8}.${i & 255}`;
      const at256 = balanceBucketOf(address, 'tcp', 80 + (i % 3), 256);
      spread.add(at256);
      for (let maps = 128; maps >= 1; maps /= 2) expect(balanceBucketOf(address, 'tcp', 80 + (i % 3), maps)).toBe(at256 & (maps - 1));
    }
    // 2000 ports over 256 maps: every map used (a hash that ignored a part of the key would leave most empty).
    expect(spread.size).toBe(256);
    // The protocol and the port are part of the key.
    const byKey = new Set(['tcp', 'udp', 'sctp'].flatMap((p) => [80, 443, 8080, 53].map((port) => balanceBucketOf('198.18.0.1', p, port, 256))));
    expect(byKey.size).toBeGreaterThan(6);
  });

  it('read back only the count of maps from their names, and place each port as a cold start would', () => {
    const cfg = benchConfig();
    const ports = Array.from({ length: 600 }, (_, i) => clusterIPServicePort(`s${i}`, `198.18.${i >> 8}.${i & 255}`, {}, 'ns'));
    const endpointsOf = (i: number): ServiceEndpoint[] => [ep(`198.19.${i >> 8}.${i & 255}`), ep(`198.19.9.${i % 200}`)];
    const place = (groups: BalanceGroups): { chains: string[]; elements: Map<string, SetElement[]> } => {
      const elements = new Map<string, SetElement[]>();
      const put = (set: string, e: SetElement): void => void (elements.get(set) ?? elements.set(set, []).get(set)!).push(e);
      const chains = ports.map((sp, i) => groups.place(sp, 'tcp', endpointsOf(i), put));
      return { chains, elements };
    };
    const cold = new BalanceGroups();
    cold.fitTo({ servicePorts: 600, endpoints: 4 * BALANCE_MAP_ELEMENTS });
    const written = place(cold);
    const maps = cold.maps(cfg);
    expect(maps.map((m) => m.name)).toEqual(['balance-0', 'balance-1', 'balance-2', 'balance-3']);
    for (const [, list] of written.elements) expect(list.length).toBeLessThan(2 * (1200 / 4));

    // A restart: the names alone (their elements are not there to read), a smaller state.
    const restarted = new BalanceGroups();
    restarted.adopt(maps.map((m): NftSet => ({ ...m, elements: [] })));
    restarted.fitTo({ servicePorts: 600, endpoints: 1200 });
    expect(place(restarted)).toEqual(written);
    // A table whose highest maps were empty (not declared): the same places.
    const fewer = new BalanceGroups();
    fewer.adopt(maps.filter((m) => m.name !== 'balance-3').map((m): NftSet => ({ ...m, elements: [] })));
    fewer.fitTo({ servicePorts: 600, endpoints: 1200 });
    expect(place(fewer)).toEqual(written);
  });

  it('follow the ports: a map is declared while a port is in it, a chain while a port of its count uses it', () => {
    const cfg = benchConfig();
    const groups = new BalanceGroups();
    groups.fitTo({ servicePorts: 2, endpoints: 4 * BALANCE_MAP_ELEMENTS });
    const put = (): void => {};
    const d = clusterIPServicePort('d', '198.18.200.4', {}, 'ns');
    const chain = groups.place(d, 'tcp', [ep('198.19.1.6'), ep('198.19.1.7')], put);
    expect(chain).toBe(`balance-${balanceBucketOf('198.18.200.4', 'tcp', d.port, 4)}-tcp-2`);
    const version = groups.mapsVersion;
    expect(groups.chains(cfg).map((c) => c.chain.name)).toEqual([chain]);
    // The same port again, another endpoint: the same map, the same chain.
    expect(groups.place(d, 'tcp', [ep('198.19.1.8'), ep('198.19.1.7')], put)).toBe(chain);
    expect(groups.mapsVersion).toBe(version);
    groups.release(d.id);
    expect(groups.maps(cfg)).toEqual([]);
    expect(groups.chains(cfg)).toEqual([]);
    expect(groups.mapsVersion).not.toBe(version);
  });
});
