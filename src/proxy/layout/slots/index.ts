// The "slots" layout, the proxy's default: kube-proxy's public contract (the same table, base
// chains and priorities, the same dispatch maps, service chains and names), with the endpoints
// of every service chain in shared bucket maps keyed by a slot number instead of one anonymous
// map per chain:
//
//   service-HASH-ns/svc/tcp/p:  meta l4proto tcp dnat ip to numgen random mod 3 offset 131072 map @endpoints-4
//   map endpoints-4 { 131072 : 198.18.1.5 . 8080, 131073 : ..., 131074 : ... }
//
// so a table holds a few hundred maps at 30k services instead of 30k sets, and no map is bound by
// more than a bucket's chains (64-256, by the table's shape; why: allocator.ts and docs/architecture.md). Replacing an
// endpoint is one element deleted and added; a change of endpoint count is the chain's one rule
// plus the elements at the tail of its range.
//
// ClientIP affinity takes two rules in the service chain and one in a `pin-` chain per service
// port, with pins in shared timeout maps (affinity.ts).
//
// A port reached through its ClusterIP alone, without affinity, has no service chain at all: its
// dispatch element goes to a chain shared by ports of its endpoint count, which finds the endpoint
// by the packet's own destination (balance.ts). Most ports of a large cluster are such ports.

import { constant, ct, meta, numgen, rule, th, types, type NftSet, type RuleBuilder, type Ruleset } from '../../../nft/index.js';
import type { StateSize } from '../../model/state-size.js';
import type { ServiceEndpoint, ServicePort, ServicePortId } from '../../model/types.js';
import { baseObjects } from '../kube-proxy/base.js';
import { l4proto, serviceObjects, type PickerContext, type SharedChain } from '../kube-proxy/service.js';
import { familyParts } from '../family.js';
import { largeSets } from '../large-sets.js';
import { balance, pins, prepareChainBases, serviceChainBase, slotMap } from '../names.js';
import { nftFamily, type BaseObjects, type ChainRules, type Layout, type LayoutConfig, type ServiceObjects } from '../types.js';
import { AffinityPins, PIN_ID, pinsMap, pinsMapOf, type PinSweep } from './affinity.js';
import { BalanceGroups, sharesBalanceChain } from './balance.js';
import { exactCopy } from '../../exact-array.js';
import { endpointKey, SLOTS_PER_CHAIN, SlotAllocator, type SlotEndpoint } from './allocator.js';
import { pinOf, pinTag, slotRangeOf, slotTag, type PinRef } from './rule-tags.js';

const { inet_proto, inet_service, integer } = types;

export class SlotsLayout implements Layout {
  readonly name = 'slots';
  private readonly slots: SlotAllocator;
  private readonly pins = new AffinityPins();
  /** Service ports reached through their ClusterIP alone, without a chain of their own (balance.ts). */
  private readonly balanced = new BalanceGroups();
  /** The endpoint groups (chain names, one or two) each service port placed in its last service() call. */
  private readonly groupsOf = new Map<ServicePortId, string[]>();
  /** Affinity groups placed since the last adopt() (the others are gone). */
  private readonly pinnedSinceAdopt = new Set<string>();
  /**
   * sharedSets()'s last answer and what it was made from (the buckets' versions: SlotAllocator,
   * AffinityPins): every sync asks, and the buckets in use rarely change, while the answer is
   * hundreds of set objects at 10k services.
   */
  private lastShared: { of: string; sets: readonly NftSet[] } | undefined;

  /** `bucketSize`: service chains per bucket map, fixed (tests); by default each table's own (SlotAllocator.sizeFromTable, sizeForState). */
  constructor(bucketSize?: number) {
    this.slots = new SlotAllocator(bucketSize);
  }

  /** The chain names' hashes, of the ports that have chains (a balanced port has none). */
  prepare(ports: readonly ServicePort[]): void {
    prepareChainBases(ports.filter((sp) => !sharesBalanceChain(sp)));
  }

  largeSets(size: StateSize): readonly string[] {
    return largeSets(size);
  }

  /** kube-proxy's fixed objects, and what renews affinity pins after the DNAT (affinity.ts). */
  base(cfg: LayoutConfig): BaseObjects {
    const b = baseObjects(cfg);
    const family = nftFamily(cfg.family);
    const { l3, addr } = familyParts(cfg.family);
    b.sets.push({ family, table: cfg.table, name: pins.dispatch, key: [addr, inet_proto, inet_service], data: 'verdict', comment: pins.dispatchComment });
    const renew = (chain: string, newOnly: boolean) => {
      const r = newOnly ? rule(family).match(ct.state, 'new') : rule(family);
      return r.match(ct.status, 'dnat').vmap([l3.daddr, meta.l4proto, th.dport], pins.dispatch).rule(cfg.table, chain);
    };
    // First in both chains: masquerading (later in nat-postrouting) ends the chain. The nat chain
    // sees only a connection's first packet; input sees every packet, hence `ct state new`.
    b.rules.unshift(renew('nat-postrouting', false), renew('filter-input', true));
    return b;
  }

  service(cfg: LayoutConfig, sp: ServicePort, endpoints: readonly ServiceEndpoint[]): ServiceObjects {
    const family = nftFamily(cfg.family);
    const { l3, natFamily } = familyParts(cfg.family);
    const placed: string[] = [];
    const proto = l4proto(sp);
    const affinity = sp.affinityTimeoutSeconds > 0;
    let balancedTo: string | undefined;
    const picker = (port: ServicePort, chainOf: () => string, eps: readonly ServiceEndpoint[], ctx: PickerContext): RuleBuilder[] | SharedChain | undefined => {
      // Reached through its ClusterIP alone, without affinity: a shared chain finds its endpoints.
      if (sharesBalanceChain(port)) {
        balancedTo = this.balanced.place(port, proto, eps, ctx.put);
        return { sharedChain: balancedTo };
      }
      const chain = chainOf();
      // Affinity that O(1) rules cannot express keeps kube-proxy's endpoint chains (affinity.ts).
      // One endpoint keeps its slot too, unlike kube-proxy 1.37's direct DNAT: replacing it is then
      // an element, not a NAT rule (whose commit validates the whole table); docs/decisions.md.
      if (affinity && !this.pins.eligible(port, chain, eps)) return undefined;
      const p = this.slots.place(chain, eps);
      placed.push(chain);
      const map = slotMap.name(p.bucket);
      p.order.forEach((ep, i) => ctx.put(map, { key: [p.base + i], value: [ep.ip, ep.port] }));
      const range = { bucket: p.bucket, member: p.base / SLOTS_PER_CHAIN, endpoints: p.order.length };
      const pick = rule(family).match(meta.l4proto, proto).dnatMap({ family: natFamily, key: numgen('random', p.order.length, p.base), map: { name: map } }).tag(slotTag(range));
      if (!affinity) return [pick];
      const pinsBucket = pinsMapOf(p.bucket, range.member);
      const id = this.pins.place(port, chain, pinsBucket, eps);
      this.pinnedSinceAdopt.add(chain);
      const pinMap = pins.map(pinsBucket);
      const key = [l3.saddr, constant(PIN_ID, id)];
      const pinChain = pins.chain(serviceChainBase(port));
      ctx.addChain(pinChain, [rule(family).dynset('update', pinMap, key, { timeoutMs: port.affinityTimeoutSeconds * 1000, data: [l3.daddr, th.dport] })]);
      for (const ep of eps) ctx.put(pins.dispatch, { key: [ep.ip, proto, ep.port], value: { kind: 'jump', chain: pinChain } });
      return [rule(family).match(meta.l4proto, proto).dnatMap({ family: natFamily, key, map: { name: pinMap } }).tag(pinTag({ id, bucket: pinsBucket })), pick];
    };
    try {
      return serviceObjects(cfg, sp, endpoints, picker);
    } finally {
      for (const g of this.groupsOf.get(sp.id) ?? []) {
        if (placed.includes(g)) continue;
        this.slots.release(g);
        this.pins.release(g);
      }
      this.groupsOf.set(sp.id, exactCopy(placed));
      if (balancedTo === undefined) this.balanced.release(sp.id);
    }
  }

  release(id: ServicePortId): void {
    this.balanced.release(id);
    for (const g of this.groupsOf.get(id) ?? []) {
      this.slots.release(g);
      this.pins.release(g);
    }
    this.groupsOf.delete(id);
  }

  /** Pins that point at endpoints their service port lost since the last call (the engine deletes them). */
  stalePins(cfg: LayoutConfig): PinSweep[] {
    return this.pins.stalePins(cfg);
  }

  /** Takes over the kernel's slot assignment (each service chain's numgen offset and its map's elements, and the table's bucket size) and its count of balance maps. */
  adopt(kernel: Ruleset): void {
    this.balanced.adopt(kernel.sets);
    this.slots.reset();
    this.groupsOf.clear();
    this.pinnedSinceAdopt.clear();
    const slotsOf = new Map<string, Map<number, SlotEndpoint>>();
    for (const s of kernel.sets) {
      if (slotMap.bucket(s.name) === undefined) continue;
      const m = new Map<number, SlotEndpoint>();
      for (const e of s.elements ?? []) {
        // An index, not `const [slot] =`: destructuring runs the array iterator, 50k times on a
        // restart at 10k x 5, mostly before V8 optimises this loop.
        const slot = e.key[0];
        const value = e.value as [string, number] | undefined;
        if (typeof slot === 'number' && Array.isArray(value)) m.set(slot, { ip: value[0], port: value[1] });
      }
      slotsOf.set(s.name, m);
    }
    const pinIds = new Map<string, PinRef>();
    const orders = new Map<string, (SlotEndpoint | undefined)[]>();
    for (const r of kernel.rules) {
      // An affinity chain's first rule pins; its second picks.
      const pin = pinOf(r);
      if (pin) pinIds.set(r.chain, pin);
      const range = slotRangeOf(r);
      if (!range) continue;
      const base = range.member * SLOTS_PER_CHAIN;
      const elements = slotsOf.get(slotMap.name(range.bucket));
      const order = new Array<SlotEndpoint | undefined>(range.endpoints);
      for (let j = 0; j < range.endpoints; j++) order[j] = elements?.get(base + j);
      this.slots.adopt(r.chain, range.bucket, range.member, order);
      // Only affinity chains need their order again (their pin rule comes first in the chain).
      if (pinIds.has(r.chain)) orders.set(r.chain, order);
    }
    for (const [chain, p] of pinIds) this.pins.adopt(chain, p.id, p.bucket, (orders.get(chain) ?? []).map((ep) => ep && endpointKey(ep)));
    this.slots.sizeFromTable();
    // A full sync is the time to repack buckets that churn left sparse: the moved chains get a new
    // rule and their elements in a lower bucket, in the same atomic transaction; their affinity pins
    // start over (a new id in the new bucket).
    for (const chain of this.slots.compact()) this.pins.release(chain);
  }

  /** An empty table's bucket size, by the state a full plan is about to place (SlotAllocator.sizeForState). */
  fitTo(size: StateSize): void {
    this.slots.sizeForState(size);
    this.balanced.fitTo(size);
  }

  /** After a full plan: adopted groups no service claimed belong to stale chains. */
  sweep(): void {
    this.slots.sweep();
    this.pins.sweepUnplaced(this.pinnedSinceAdopt);
  }

  /** A bucket map's slots each belong to one service chain (the allocator's invariant, tested), a balance map's keys to one port (they start with its dispatch key). */
  keysNeverShared(setName: string): boolean {
    return slotMap.bucket(setName) !== undefined || balance.bucket(setName) !== undefined;
  }

  /** The balance chains in use, each with its one rule. */
  sharedChains(cfg: LayoutConfig): readonly ChainRules[] {
    return this.balanced.chains(cfg);
  }

  /** The bucket maps in use, the pins maps of buckets with affinity and the balance maps (declarations, no elements). */
  sharedSets(cfg: LayoutConfig): readonly NftSet[] {
    const of = `${cfg.family} ${cfg.table} ${this.slots.bucketsVersion} ${this.pins.groupsVersion} ${this.balanced.mapsVersion}`;
    if (this.lastShared?.of === of) return this.lastShared.sets;
    const pinnedBuckets = [...this.pins.bucketsInUse()].sort((a, b) => a - b);
    const slotBuckets = this.slots.bucketsInUse();
    const family = nftFamily(cfg.family);
    const { addr, natFamily } = familyParts(cfg.family);
    const pinned = pinnedBuckets.map((b) => pinsMap(cfg, b));
    const buckets = slotBuckets.map((b): NftSet => ({
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
    const sets = [...buckets, ...pinned, ...this.balanced.maps(cfg)];
    this.lastShared = { of, sets };
    return sets;
  }
}
