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
// Where a port's endpoints go is a pure function of the model, so that a restart computes what the
// kernel holds without reading it back: the map is chosen by a hash of the port's dispatch key
// (address, protocol, port) over a power-of-two count of maps sized by the table's endpoints, and
// the endpoints are numbered in their sorted order. A restart then compares the maps by hashes
// alone, as it compares the other sets, and decodes none of their elements (docs/decisions.md,
// "Balance maps placed by a hash, not adopted"). The price: replacing one endpoint also renumbers
// the port's endpoints sorted between the old one and the new one (elements of one map, in the
// same commit), where kept numbers would have replaced one element.

import { meta, numgen, rule, th, types, type NftSet, type SetElement } from '../../../nft/index.js';
import type { StateSize } from '../../model/state-size.js';
import type { ServiceEndpoint, ServicePort, ServicePortId } from '../../model/types.js';
import { familyParts } from '../family.js';
import { balance } from '../names.js';
import { nftFamily, type ChainRules, type LayoutConfig } from '../types.js';

const { inet_proto, inet_service, integer } = types;

/** Whether the port's endpoints go to a balance chain: reached through its ClusterIP alone, without ClientIP affinity. */
export const sharesBalanceChain = (sp: ServicePort): boolean => !sp.external && !(sp.affinityTimeoutSeconds > 0);

/**
 * Elements a balance map is sized for. Reading a map back costs the square of its elements (each
 * 32 KiB part of a set's dump walks the set from its start, Linux 6.18 nf_tables_dump_set), and
 * its rules are few (one per endpoint count its ports have), so many small maps cost little more
 * than a few large ones to write and far less to read.
 */
export const BALANCE_MAP_ELEMENTS = 2048;

/** The most balance maps a table gets (a power of two): 256 maps of 2048 is 512k endpoints. */
export const MAX_BALANCE_MAPS = 256;

/** The count of balance maps for a state of `size`: a power of two, so that a smaller count divides a larger one. */
export function balanceMapsFor(size: StateSize): number {
  let maps = 1;
  while (maps < MAX_BALANCE_MAPS && maps * BALANCE_MAP_ELEMENTS < size.endpoints) maps *= 2;
  return maps;
}

/**
 * The map of a port's dispatch key among `maps` (a power of two): FNV-1a over the address's
 * characters, the protocol's first and the port. Changing it moves every port at the next restart.
 * With a power-of-two count, a port's map among half as many is its map among these, halved: a
 * table read back with its highest maps empty (so that fewer seem to exist) places every port
 * where it is.
 */
export function balanceBucketOf(address: string, protocol: string, port: number, maps: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ protocol.charCodeAt(0), 0x01000193);
  h = Math.imul(h ^ (port & 0xff), 0x01000193);
  h = Math.imul(h ^ (port >>> 8), 0x01000193);
  return (h >>> 0) & (maps - 1);
}

/** a before b: by address text, then port. */
const before = (a: ServiceEndpoint, b: ServiceEndpoint): boolean => a.ip < b.ip || (a.ip === b.ip && a.port < b.port);

/**
 * The endpoints in their balance order: sorted by address and port, each address and port once.
 * Insertion sort for the usual handful; the array sort for more.
 */
export function balanceOrder(endpoints: readonly ServiceEndpoint[]): ServiceEndpoint[] {
  const out: ServiceEndpoint[] = [];
  if (endpoints.length > 16) {
    const sorted = [...endpoints].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    for (const ep of sorted) {
      const last = out[out.length - 1];
      if (!last || last.ip !== ep.ip || last.port !== ep.port) out.push(ep);
    }
    return out;
  }
  for (let i = 0; i < endpoints.length; i++) {
    const ep = endpoints[i]!;
    let at = out.length;
    while (at > 0 && before(ep, out[at - 1]!)) at--;
    const prev = out[at - 1];
    if (prev && prev.ip === ep.ip && prev.port === ep.port) continue;
    out.splice(at, 0, ep);
  }
  return out;
}

interface ChainUse {
  bucket: number;
  protocol: 'tcp' | 'udp' | 'sctp';
  endpoints: number;
  /** Service ports sent to it. */
  ports: number;
}

export class BalanceGroups {
  /** The table's count of balance maps (a power of two): set by the state (fitTo), or read back (adopt). */
  private mapCount = 1;
  /** Service ports placed in each map. */
  private readonly portsIn: number[] = [];
  private readonly chainsInUse = new Map<string, ChainUse>();
  /** Each placed port's map and chain. */
  private readonly placed = new Map<ServicePortId, { bucket: number; chain: string }>();
  /** Counts the changes to the chains in use: while it stays, chains() answers the same. */
  private chainsVersion = 0;
  private lastChains: { of: string; chains: readonly ChainRules[] } | undefined;
  /** Changes when the maps in use change: while it stays, maps() answers the same. */
  mapsVersion = 0;

  /**
   * Before a full plan: at least the count of maps the state's endpoints want. A table read back
   * keeps its count until the state outgrows it; then, in that plan, half of the ports move to the
   * new maps (one transaction).
   */
  fitTo(size: StateSize): void {
    const wanted = balanceMapsFor(size);
    if (wanted > this.mapCount) this.mapCount = wanted;
  }

  /**
   * Places the port's endpoints in its map (through `put`) and returns the chain its dispatch
   * element goes to.
   */
  place(sp: ServicePort, protocol: 'tcp' | 'udp' | 'sctp', endpoints: readonly ServiceEndpoint[], put: (set: string, e: SetElement) => void): string {
    const bucket = balanceBucketOf(sp.clusterIP, protocol, sp.port, this.mapCount);
    const order = balanceOrder(endpoints);
    const map = balance.map(bucket);
    for (let i = 0; i < order.length; i++) {
      const ep = order[i]!;
      put(map, { key: [sp.clusterIP, protocol, sp.port, i], value: [ep.ip, ep.port] });
    }
    const chain = balance.chain(bucket, protocol, order.length);
    const was = this.placed.get(sp.id);
    if (was?.chain === chain) return chain;
    if (was) this.release(sp.id);
    this.use(bucket, chain, protocol, order.length);
    this.placed.set(sp.id, { bucket, chain });
    return chain;
  }

  /** The port is gone, or no longer balanced here: its share of a map and of a chain is free. */
  release(id: ServicePortId): void {
    const was = this.placed.get(id);
    if (!was) return;
    this.placed.delete(id);
    if (--this.portsIn[was.bucket]! === 0) this.mapsVersion++;
    const use = this.chainsInUse.get(was.chain);
    if (!use || --use.ports > 0) return;
    this.chainsInUse.delete(was.chain);
    this.chainsVersion++;
  }

  /**
   * Reads the table's count of maps back from their names, before a full sync places every port
   * again: the smallest power of two above the highest map (see balanceBucketOf). Their elements
   * are not read: the placement is the model's.
   */
  adopt(sets: readonly NftSet[]): void {
    this.placed.clear();
    this.portsIn.length = 0;
    this.mapsVersion++;
    if (this.chainsInUse.size) this.chainsVersion++;
    this.chainsInUse.clear();
    let highest = -1;
    for (const s of sets) {
      const bucket = balance.bucket(s.name);
      if (bucket !== undefined && bucket < MAX_BALANCE_MAPS && bucket > highest) highest = bucket;
    }
    this.mapCount = 1;
    while (this.mapCount <= highest) this.mapCount *= 2;
  }

  /** The maps of the ports placed (declarations). */
  maps(cfg: LayoutConfig): NftSet[] {
    const family = nftFamily(cfg.family);
    const { addr, natFamily } = familyParts(cfg.family);
    const inUse: number[] = [];
    this.portsIn.forEach((n, b) => {
      if (n > 0) inUse.push(b);
    });
    return inUse.map((b) => ({
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

  private use(bucket: number, chain: string, protocol: 'tcp' | 'udp' | 'sctp', endpoints: number): void {
    this.portsIn[bucket] = (this.portsIn[bucket] ?? 0) + 1;
    if (this.portsIn[bucket] === 1) this.mapsVersion++;
    const use = this.chainsInUse.get(chain);
    if (use) use.ports++;
    else {
      this.chainsInUse.set(chain, { bucket, protocol, endpoints, ports: 1 });
      this.chainsVersion++;
    }
  }
}
