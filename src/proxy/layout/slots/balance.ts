// The slots layout's service ports that are reached through their ClusterIP alone, and without
// ClientIP affinity: they get no chain of their own. `service-ips` sends each to a chain shared by
// every such port of its bucket, protocol and endpoint count, whose one rule finds the endpoint by
// the packet's own destination and a numgen result:
//
//   chain balance-0-tcp-3 { meta l4proto tcp dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 3 map @balance-0 }
//   map balance-0 { 198.18.0.10 . tcp . 80 . 0 : 198.19.1.5 . 8080, ... . 1 : ..., ... . 2 : ... }
//
// Why: the kernel walks every chain of the namespace at every commit, and validates the chains a
// NAT rule can be reached from whenever one is written; a chain per service port made the
// smallest sync of a 10k-service table cost over 1 ms in the kernel, and most of a cold start's
// and a restart's work (docs/decisions.md, "Service ports without a chain of their own").
//
// Which endpoint sits at which number is kept as the slot allocator keeps it (one endpoint replaced
// is one element replaced), per group named by the port's dispatch key. The maps come in buckets of
// ports, as the slot maps do: one map of every endpoint would be read back quadratically, and a
// bucket's map is bound by one rule per endpoint count its ports have, not one per port.

import { meta, numgen, rule, th, types, type NftSet, type SetElement } from '../../../nft/index.js';
import type { ServiceEndpoint, ServicePort, ServicePortId } from '../../model/types.js';
import { familyParts } from '../family.js';
import { balance } from '../names.js';
import { nftFamily, type ChainRules, type LayoutConfig } from '../types.js';
import { SlotAllocator, type SlotEndpoint } from './allocator.js';

const { inet_proto, inet_service, integer } = types;

/**
 * Service ports per balance map. Its rules are few (one per endpoint count), so the bound on a
 * map's bindings that sizes the slot maps does not apply; reading a map back costs the square of
 * its elements (each part of a set's dump walks the set from its start), which this keeps small.
 */
export const BALANCE_PORTS_PER_MAP = 256;

interface ChainUse {
  bucket: number;
  protocol: 'tcp' | 'udp' | 'sctp';
  endpoints: number;
  /** Service ports sent to it. */
  ports: number;
}

/** The port's dispatch key as a group name: what a balance map's elements are keyed by, too. */
const groupOf = (address: string, protocol: string, port: number): string => `${address}|${protocol}|${port}`;

export class BalanceGroups {
  private readonly slots = new SlotAllocator(BALANCE_PORTS_PER_MAP);
  private readonly chainsInUse = new Map<string, ChainUse>();
  /** Each placed port's group and chain. */
  private readonly placed = new Map<ServicePortId, { group: string; chain: string }>();
  /** Counts the changes to the chains in use: while it stays, chains() answers the same. */
  private chainsVersion = 0;
  private lastChains: { of: string; chains: readonly ChainRules[] } | undefined;

  /** Changes when the maps in use change: while it stays, maps() answers the same. */
  get mapsVersion(): number {
    return this.slots.bucketsVersion;
  }

  /**
   * Places the port's endpoints in its bucket's map (through `put`) and returns the chain its
   * dispatch element goes to.
   */
  place(sp: ServicePort, protocol: 'tcp' | 'udp' | 'sctp', endpoints: readonly ServiceEndpoint[], put: (set: string, e: SetElement) => void): string {
    const group = groupOf(sp.clusterIP, protocol, sp.port);
    let was = this.placed.get(sp.id);
    // A new address or port is a new group: the old one's numbers and chain share go.
    if (was && was.group !== group) {
      this.release(sp.id);
      was = undefined;
    }
    const p = this.slots.place(group, endpoints);
    const map = balance.map(p.bucket);
    for (let i = 0; i < p.order.length; i++) {
      const ep = p.order[i]!;
      put(map, { key: [sp.clusterIP, protocol, sp.port, i], value: [ep.ip, ep.port] });
    }
    const chain = balance.chain(p.bucket, protocol, p.order.length);
    if (was?.chain !== chain) {
      if (was) this.unuse(was.chain);
      const use = this.chainsInUse.get(chain);
      if (use) use.ports++;
      else {
        this.chainsInUse.set(chain, { bucket: p.bucket, protocol, endpoints: p.order.length, ports: 1 });
        this.chainsVersion++;
      }
    }
    this.placed.set(sp.id, { group, chain });
    return chain;
  }

  /** The port is gone, or no longer balanced here: its numbers and its share of a chain are free. */
  release(id: ServicePortId): void {
    const was = this.placed.get(id);
    if (!was) return;
    this.placed.delete(id);
    this.slots.release(was.group);
    this.unuse(was.chain);
  }

  /**
   * Takes over the kernel's numbering from the balance maps' elements (`address . protocol . port .
   * number : endpoint`), before a full sync places every port again.
   */
  adopt(sets: readonly NftSet[]): void {
    this.slots.reset();
    this.placed.clear();
    if (this.chainsInUse.size) this.chainsVersion++;
    this.chainsInUse.clear();
    for (const s of sets) {
      const bucket = balance.bucket(s.name);
      if (bucket === undefined || s.data === undefined || s.data === 'verdict') continue;
      const orders = new Map<string, (SlotEndpoint | undefined)[]>();
      for (const e of s.elements ?? []) {
        const key = e.key;
        const value = e.value as readonly unknown[] | undefined;
        const number = key[3];
        if (key.length !== 4 || typeof number !== 'number' || !Array.isArray(value)) continue;
        const group = groupOf(String(key[0]), String(key[1]), Number(key[2]));
        let order = orders.get(group);
        if (!order) orders.set(group, (order = []));
        order[number] = { ip: String(value[0]), port: Number(value[1]) };
      }
      let member = 0;
      // A hole (a number whose element is missing) stays undefined: place() fills it.
      for (const [group, order] of orders) this.slots.adopt(group, bucket, member++, Array.from(order));
    }
  }

  /** After a full plan: adopted groups no port claimed are gone. */
  sweep(): void {
    this.slots.sweep();
  }

  /** The maps of the buckets in use (declarations). */
  maps(cfg: LayoutConfig): NftSet[] {
    const family = nftFamily(cfg.family);
    const { addr, natFamily } = familyParts(cfg.family);
    return this.slots.bucketsInUse().map((b) => ({
      family,
      table: cfg.table,
      name: balance.map(b),
      key: [addr, inet_proto, inet_service, integer(4, 'host')],
      data: [addr, inet_service],
      // nft 1.0.6 cannot write an integer inside a `type` concatenation: typeof, as nft writes it.
      typeof: {
        key: [{ expr: 'payload', protocol: natFamily, field: 'daddr' }, { expr: 'meta', key: 'l4proto' }, { expr: 'payload', protocol: 'th', field: 'dport' }, { expr: 'numgen', mode: 'random', modulus: 1 }],
        data: [{ expr: 'payload', protocol: natFamily, field: 'daddr' }, { expr: 'payload', protocol: 'tcp', field: 'dport' }],
      },
      comment: balance.comment,
    }));
  }

  /** The chains in use, with their one rule each. */
  chains(cfg: LayoutConfig): readonly ChainRules[] {
    const of = `${cfg.family} ${cfg.table} ${this.chainsVersion}`;
    if (this.lastChains?.of === of) return this.lastChains.chains;
    const family = nftFamily(cfg.family);
    const { l3, natFamily } = familyParts(cfg.family);
    const chains = [...this.chainsInUse].map(([name, u]) => ({
      chain: { family, table: cfg.table, name },
      rules: [
        rule(family)
          .match(meta.l4proto, u.protocol)
          .dnatMap({ family: natFamily, key: [l3.daddr, meta.l4proto, th.dport, numgen('random', u.endpoints)], map: { name: balance.map(u.bucket) } })
          .rule(cfg.table, name),
      ],
    }));
    this.lastChains = { of, chains };
    return chains;
  }

  private unuse(chain: string): void {
    const use = this.chainsInUse.get(chain);
    if (!use) return;
    if (--use.ports > 0) return;
    this.chainsInUse.delete(chain);
    this.chainsVersion++;
  }
}
