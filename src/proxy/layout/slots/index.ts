// The "slots" layout, the proxy's default: kube-proxy's public contract (the same table, base
// chains and priorities, the same dispatch maps, service chains and names), with the endpoints
// of every service chain in shared bucket maps keyed by a slot number instead of one anonymous
// map per chain:
//
//   service-HASH-ns/svc/tcp/p:  meta l4proto tcp dnat ip to numgen random mod 3 offset 131072 map @endpoints-4
//   map endpoints-4 { 131072 : 198.18.1.5 . 8080, 131073 : ..., 131074 : ... }
//
// so a table holds a few hundred maps at 30k services instead of 30k sets, and no map is bound by
// more than CHAINS_PER_BUCKET rules (why that matters: allocator.ts and DESIGN.md). Replacing an
// endpoint is one element deleted and added; a change of endpoint count is the chain's one rule
// plus the elements at the tail of its range.
//
// Service ports with ClientIP affinity keep kube-proxy's per-endpoint chains and timeout sets:
// nft 1.0.6 cannot list any O(1)-rule composition we found that pins a client to a slot (a map
// lookup's result feeding a dynset or a second lookup aborts `nft list ruleset`; see README).

import { meta, numgen } from '../../../nft/builder/fields.js';
import { rule, type RuleBuilder } from '../../../nft/builder/rule-builder.js';
import type { NftSet, Ruleset, SetElement } from '../../../nft/objects.js';
import { inet_service, integer } from '../../../nft/types/datatypes.js';
import type { ServiceEndpoint, ServicePort, ServicePortId } from '../../model/types.js';
import { baseObjects } from '../kube-proxy/base.js';
import { serviceObjects } from '../kube-proxy/service.js';
import { familyParts } from '../family.js';
import { slotMap } from '../names.js';
import { nftFamily, type Layout, type LayoutConfig, type ServiceObjects } from '../types.js';
import { SLOTS_PER_CHAIN, SlotAllocator } from './allocator.js';

const endpointKey = (ep: Pick<ServiceEndpoint, 'ip' | 'port'>): string => `${ep.ip}|${ep.port}`;

export class SlotsLayout implements Layout {
  readonly name = 'slots';
  private readonly slots: SlotAllocator;
  /** The endpoint groups (chain names) each service port placed in its last service() call. */
  private readonly groupsOf = new Map<ServicePortId, Set<string>>();

  constructor(chainsPerBucket?: number) {
    this.slots = new SlotAllocator(chainsPerBucket);
  }

  base(cfg: LayoutConfig) {
    return baseObjects(cfg);
  }

  service(cfg: LayoutConfig, sp: ServicePort, endpoints: readonly ServiceEndpoint[]): ServiceObjects {
    const family = nftFamily(cfg.family);
    const { natFamily } = familyParts(cfg.family);
    const placed = new Set<string>();
    const picker = (port: ServicePort, chain: string, eps: readonly ServiceEndpoint[], put: (set: string, e: SetElement) => void): RuleBuilder[] | undefined => {
      if (port.affinityTimeoutSeconds > 0) return undefined;
      const byKey = new Map(eps.map((ep) => [endpointKey(ep), ep]));
      const p = this.slots.place(chain, [...byKey.keys()]);
      placed.add(chain);
      const map = slotMap.name(p.bucket);
      p.order.forEach((k, i) => {
        const ep = byKey.get(k)!;
        put(map, { key: [p.base + i], value: [ep.ip, ep.port] });
      });
      const proto = port.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
      return [rule(family).match(meta.l4proto, proto).dnatMap({ family: natFamily, key: numgen('random', eps.length, p.base), map: { name: map } })];
    };
    try {
      return serviceObjects(cfg, sp, endpoints, picker);
    } finally {
      for (const g of this.groupsOf.get(sp.id) ?? []) if (!placed.has(g)) this.slots.release(g);
      this.groupsOf.set(sp.id, placed);
    }
  }

  release(id: ServicePortId): void {
    for (const g of this.groupsOf.get(id) ?? []) this.slots.release(g);
    this.groupsOf.delete(id);
  }

  /** Takes over the kernel's slot assignment: each service chain's numgen offset and its map's elements. */
  adopt(kernel: Ruleset): void {
    this.slots.reset();
    this.groupsOf.clear();
    const slotsOf = new Map<string, Map<number, string>>();
    for (const s of kernel.sets) {
      if (slotMap.bucket(s.name) === undefined) continue;
      const m = new Map<number, string>();
      for (const e of s.elements ?? []) {
        const [slot] = e.key as [number];
        const value = e.value as [string, number] | undefined;
        if (typeof slot === 'number' && Array.isArray(value)) m.set(slot, endpointKey({ ip: value[0], port: value[1] }));
      }
      slotsOf.set(s.name, m);
    }
    for (const r of kernel.rules) {
      const i = r.exprs.findIndex((e) => e.type === 'numgen');
      const ng = r.exprs[i];
      const lookup = r.exprs[i + 1];
      if (ng?.type !== 'numgen' || lookup?.type !== 'lookup') continue;
      const bucket = slotMap.bucket(lookup.set);
      const base = ng.offset ?? 0;
      if (bucket === undefined || base % SLOTS_PER_CHAIN !== 0) continue;
      const elements = slotsOf.get(lookup.set) ?? new Map<number, string>();
      const order = Array.from({ length: ng.modulus }, (_, j) => elements.get(base + j));
      this.slots.adopt(r.chain, bucket, base / SLOTS_PER_CHAIN, order);
    }
  }

  /** After a full plan: adopted groups no service claimed belong to stale chains. */
  sweep(): void {
    this.slots.sweep();
  }

  /** The bucket maps in use (declarations, no elements). */
  sharedSets(cfg: LayoutConfig): NftSet[] {
    const family = nftFamily(cfg.family);
    const { addr, natFamily } = familyParts(cfg.family);
    return this.slots.bucketsInUse().map((b) => ({
      family,
      table: cfg.table,
      name: slotMap.name(b),
      key: [integer(4, 'host')],
      data: [addr, inet_service],
      // nft 1.0.6 cannot write `type integer`; typeof makes `nft list` print slots and `addr . port`.
      typeof: {
        key: [{ expr: 'numgen', mode: 'random', modulus: 1 }],
        data: [{ expr: 'payload', protocol: natFamily, field: 'daddr' }, { expr: 'payload', protocol: 'tcp', field: 'dport' }],
      },
      comment: slotMap.comment,
    }));
  }
}
