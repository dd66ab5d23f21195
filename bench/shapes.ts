// The benchmark's rulesets, built with the library's own builder so that both sides of every case
// load the same transaction: nftlink commits it over netlink, `nft -f` reads its rendered text.
//
// The service shapes are the rows of docs/architecture.md's "Kernel facts" table (10,000 TCP ClusterIP
// services x 5 endpoints). Each has kube-proxy's dispatch: a base nat chain jumping to `services`,
// which looks `ip daddr . meta l4proto . th dport` up in the verdict map `service-ips`. In shapes
// 1-5 its elements `goto` one chain per service, and what differs is only how a service's chain
// picks an endpoint: that choice (anonymous sets, named maps, one shared map, buckets) is what
// decides the kernel's cost. Shape 6 has no chain per service: every service with N endpoints goes
// to one chain for N, whose rule finds the endpoint by the packet's own address, protocol and port
// and a numgen result (every commit walks every chain of the namespace: bench/commit-walk.ts).

import { ip, meta, numgen, rule, th, Transaction, types, type NftSet, type Rule, type SetElement } from '../src/nft/index.js';
import { bigMapKey, bigMapValue, endpointAddr, serviceAddr } from './addresses.js';

const { ipv4_addr, inet_proto, inet_service, integer } = types;

export const TABLE = 'nftlink-bench';
export const FAMILY = 'ip' as const;
export const BIG_MAP = 'big';
export const ENDPOINT_PORT = 8080;
export const SERVICE_PORT = 80;

export type ShapeId = 1 | 2 | 3 | 4 | 5 | 6;
export const SHAPES: readonly ShapeId[] = [1, 2, 3, 4, 5, 6];

export const SHAPE_TITLES: Record<ShapeId, string> = {
  1: 'chain per service, inline numgen map (anonymous sets)',
  2: 'same, split into 20 transactions',
  3: 'named endpoint map per service',
  4: 'ONE shared map, numgen ... offset B',
  5: 'shared maps in buckets of 250 services',
  6: 'a chain per endpoint count, one map keyed by daddr . proto . port . numgen',
};

/** Shape 2 splits the load into this many transactions (docs/architecture.md: 20 of 500 services). */
export const SPLIT_TRANSACTIONS = 20;
/** Shape 5: services per shared endpoint map (docs/architecture.md: 250, so 40 maps for 10k services). */
export const BUCKET_SERVICES = 250;

// ---- case (a), (c), (d): one big concatenated map ----

/** `type ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service` */
export function bigMap(size?: number): NftSet {
  const map: NftSet = { family: FAMILY, table: TABLE, name: BIG_MAP, key: [ipv4_addr, inet_proto, inet_service], data: [ipv4_addr, inet_service] };
  return size === undefined ? map : { ...map, size };
}

/**
 * The `size` a caller who knows the load would declare: the next power of two (room to grow).
 * Declared, it lets the kernel allocate its hash table once: a map without a size starts as an
 * rhashtable of 4 buckets (NFT_RHASH_ELEMENT_HINT 3, net/netfilter/nft_set_hash.c) that grows by
 * doubling while the batch inserts (rhashtable_insert_slow: 29% of a floor process's perf samples
 * for 100,000 elements, Linux 6.18); with a size
 * (NFTA_SET_DESC_SIZE) the kernel picks its fixed-size hash (nft_hash_insert in perf on Linux 6.18)
 * and allocates it once.
 * The size is also a cap: an element beyond it is refused (ENFILE).
 */
export function sizeFor(count: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(count, 1)));
}

export function bigMapElements(count: number): SetElement[] {
  const out: SetElement[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = { key: bigMapKey(i), value: bigMapValue(i) };
  return out;
}

/** The same elements, made one at a time as the transaction reads them (none kept by anyone). */
export function* bigMapElementStream(count: number): Generator<SetElement> {
  for (let i = 0; i < count; i++) yield { key: bigMapKey(i), value: bigMapValue(i) };
}

/**
 * A transaction encoded as a bound one is (its element lists cut in parts: RequestEncoder), with
 * nowhere to send them: for requests written to a file, such as (a)'s floor's.
 */
export function boundLike(): Transaction {
  return new Transaction().streamTo({ feed() {}, cancel() {} });
}

/**
 * Table + map + all elements in ONE transaction (case a). By default the elements are streamed,
 * the library's way for a large load (README, "Transactions"); `array` builds them all first.
 * With `size`, the map is declared with that size (see sizeFor). Queued into `tx`: the load
 * passes one bound to its connection (Nftables.transaction()); the floor's set-up one streaming
 * to a sink that drops its parts (boundLike()), so that both encode the same request.
 */
export function bigMapLoad(count: number, elements: 'stream' | 'array' = 'stream', size?: number, tx = new Transaction()): Transaction {
  const map = bigMap(size);
  return tx
    .add({ table: { family: FAMILY, name: TABLE } })
    .add({ set: map })
    .add({ set: map, elements: elements === 'array' ? bigMapElements(count) : bigMapElementStream(count) });
}

/**
 * One map update (case c): delete element i and add it back with other data, in one transaction.
 * A map value cannot be changed in place (an add with different data answers EEXIST on Linux 6.18).
 */
export function bigMapUpdate(i: number, generation: number): Transaction {
  const map = bigMap();
  const key = bigMapKey(i);
  return new Transaction().delete({ set: map, elements: [{ key }] }).add({ set: map, elements: [{ key, value: bigMapValue(i, generation) }] });
}

// ---- case (b): the service shapes ----

const endpointSlot = (service: number, ep: number, endpoints: number): number => service * endpoints + ep;
const chainName = (service: number): string => `svc-${service}`;

/** The service dispatch every shape shares: base chain -> services -> vmap @service-ips. */
export function addDispatch(tx: Transaction): NftSet {
  const serviceIps: NftSet = { family: FAMILY, table: TABLE, name: 'service-ips', key: [ipv4_addr, inet_proto, inet_service], data: 'verdict' };
  tx.add({ table: { family: FAMILY, name: TABLE } });
  tx.add({ chain: { family: FAMILY, table: TABLE, name: 'services' } });
  tx.add({ chain: { family: FAMILY, table: TABLE, name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100, policy: 'accept' } } });
  tx.add({ set: serviceIps });
  tx.add({ rule: rule(FAMILY).jump('services').rule(TABLE, 'nat-prerouting') });
  tx.add({ rule: rule(FAMILY).vmap([ip.daddr, meta.l4proto, th.dport], 'service-ips').rule(TABLE, 'services') });
  return serviceIps;
}

function* dispatchElements(from: number, to: number): Generator<SetElement> {
  for (let i = from; i < to; i++) yield { key: [serviceAddr(i), 'tcp', SERVICE_PORT], value: { kind: 'goto', chain: chainName(i) } };
}

/** Endpoint `k` of a service: `keyBase + k : 198.19.x.y . 8080` (keys are the numgen results, offset included). */
function endpointElement(service: number, k: number, endpoints: number, keyBase: number): SetElement {
  return { key: [keyBase + k], value: [endpointAddr(endpointSlot(service, k, endpoints)), ENDPOINT_PORT] };
}

/** `0 : 198.19.x.y . 8080, 1 : ...` for one service. */
function endpointElements(service: number, endpoints: number, keyBase: number): SetElement[] {
  const out: SetElement[] = [];
  for (let k = 0; k < endpoints; k++) out.push(endpointElement(service, k, endpoints, keyBase));
  return out;
}

/** The elements of the services [from, to) that share one map, each service's keys after the last's. */
function* bucketElements(from: number, to: number, endpoints: number): Generator<SetElement> {
  for (let i = from; i < to; i++) {
    for (let k = 0; k < endpoints; k++) yield endpointElement(i, k, endpoints, (i - from) * endpoints);
  }
}

/** A named endpoint map keyed by the numgen result (a 32-bit host-order integer). */
function endpointMap(name: string): NftSet {
  return { family: FAMILY, table: TABLE, name, key: [integer(4, 'host')], data: [ipv4_addr, inet_service] };
}

/** `meta l4proto tcp dnat ip addr . port to numgen random mod N [offset B] map <map>` */
function dnatRule(service: number, endpoints: number, offset: number, map: { elements: SetElement[] } | { name: string; set: NftSet }) {
  return rule(FAMILY)
    .match(meta.l4proto, 'tcp')
    .dnatMap({ family: 'ip', key: numgen('random', endpoints, offset), map })
    .rule(TABLE, chainName(service));
}

export interface ServiceSizes {
  services: number;
  endpoints: number;
}

/**
 * The transactions of one shape, in commit order (one for every shape but 2). `nft -f` gets one
 * file per transaction, so both sides commit the same batches.
 */
export function serviceShape(shape: ShapeId, sizes: ServiceSizes): Transaction[] {
  if (sizes.services > 65_536 || sizes.services * sizes.endpoints > 65_536) throw new RangeError('too many services/endpoints for the address plan');
  switch (shape) {
    case 1:
      return inlineMapShape(sizes, 1);
    case 2:
      return inlineMapShape(sizes, SPLIT_TRANSACTIONS);
    case 3:
      return namedMapShape(sizes);
    case 4:
      return slotsShape(sizes, sizes.services, () => 'eps');
    case 5:
      return slotsShape(sizes, BUCKET_SERVICES, (b) => `eps-b${b}`);
    case 6:
      return balanceShape(sizes);
  }
}

/** Shapes 1 and 2: a chain per service with an inline map, in one transaction or `parts` of equal size (the first also holds the dispatch). */
function inlineMapShape({ services, endpoints }: ServiceSizes, parts: number): Transaction[] {
  const first = new Transaction();
  const serviceIps = addDispatch(first);
  const per = Math.ceil(services / parts);
  const out: Transaction[] = [];
  for (let c = 0; c < parts; c++) {
    const tx = c === 0 ? first : new Transaction();
    const from = c * per;
    const to = Math.min(services, from + per);
    if (from >= to) break; // fewer services than transactions (tiny sizes only)
    addInlineMapServices(tx, from, to, endpoints);
    tx.add({ set: serviceIps, elements: dispatchElements(from, to) });
    out.push(tx);
  }
  return out;
}

function addInlineMapServices(tx: Transaction, from: number, to: number, endpoints: number): void {
  for (let i = from; i < to; i++) {
    tx.add({ chain: { family: FAMILY, table: TABLE, name: chainName(i) } });
    tx.add({ rule: dnatRule(i, endpoints, 0, { elements: endpointElements(i, endpoints, 0) }) });
  }
}

/** Shape 3: a named endpoint map per service. */
function namedMapShape({ services, endpoints }: ServiceSizes): Transaction[] {
  const tx = new Transaction();
  const serviceIps = addDispatch(tx);
  addNamedMapServices(tx, services, endpoints);
  tx.add({ set: serviceIps, elements: dispatchElements(0, services) });
  return [tx];
}

function addNamedMapServices(tx: Transaction, services: number, endpoints: number): void {
  for (let i = 0; i < services; i++) {
    const map = endpointMap(`eps-${i}`);
    tx.add({ set: map }).add({ set: map, elements: endpointElements(i, endpoints, 0) });
    tx.add({ chain: { family: FAMILY, table: TABLE, name: chainName(i) } });
    tx.add({ rule: dnatRule(i, endpoints, 0, { name: map.name, set: map }) });
  }
}

/**
 * Shapes 4 and 5, slots: service i owns keys [i*N, i*N + N) of its map, which it shares with
 * `perMap` services; `numgen ... offset B` picks among them. Order matters to the kernel here: the
 * maps are declared, the rules bind them, and only then come the elements. Binding a rule to a map
 * that already holds its elements walks every element (nf_tables_bind_set checks each against the
 * new binding), so elements-first costs rules x elements walks: 27-33 s for shape 4 on Linux 6.18
 * instead of the 7 s measured with elements last (docs/architecture.md's 7.2 s is this order).
 */
function slotsShape({ services, endpoints }: ServiceSizes, perMap: number, mapName: (bucket: number) => string): Transaction[] {
  const tx = new Transaction();
  const serviceIps = addDispatch(tx);
  const maps: NftSet[] = [];
  for (let b = 0; b * perMap < services; b++) {
    const map = endpointMap(mapName(b));
    maps.push(map);
    tx.add({ set: map });
  }
  addSlotServices(tx, maps, perMap, services, endpoints);
  maps.forEach((map, b) => {
    tx.add({ set: map, elements: bucketElements(b * perMap, Math.min(services, (b + 1) * perMap), endpoints) });
  });
  tx.add({ set: serviceIps, elements: dispatchElements(0, services) });
  return [tx];
}

function addSlotServices(tx: Transaction, maps: readonly NftSet[], perMap: number, services: number, endpoints: number): void {
  for (let i = 0; i < services; i++) {
    const map = maps[Math.floor(i / perMap)]!;
    tx.add({ chain: { family: FAMILY, table: TABLE, name: chainName(i) } });
    tx.add({ rule: dnatRule(i, endpoints, (i % perMap) * endpoints, { name: map.name, set: map }) });
  }
}

/**
 * Shape 6: no chain per service. `service-ips` sends every service of N endpoints to the chain
 * `balance-N`, whose one rule looks `ip daddr . meta l4proto . th dport . numgen random mod N` up
 * in one map: its elements are each service's address, protocol and port with the endpoint's
 * number (`198.18.0.1 . tcp . 80 . 2 : 198.19.0.3 . 8080`). The map is bound by one rule per
 * endpoint count, not one per service (the rules are declared before the elements: see slotsShape).
 */
function balanceShape({ services, endpoints }: ServiceSizes): Transaction[] {
  const tx = new Transaction();
  const serviceIps = addDispatch(tx);
  const map = balanceMap();
  tx.add({ set: map });
  tx.add({ chain: { family: FAMILY, table: TABLE, name: balanceChain(endpoints) } });
  tx.add({ rule: balanceRule(endpoints) });
  tx.add({ set: map, elements: balanceElements(services, endpoints) });
  tx.add({ set: serviceIps, elements: balanceDispatch(services, balanceChain(endpoints)) });
  return [tx];
}

/** Shape 6's map of every service's endpoints: `daddr . proto . port . endpoint number : addr . port`. */
export function balanceMap(): NftSet {
  return {
    family: FAMILY,
    table: TABLE,
    name: 'eps',
    key: [ipv4_addr, inet_proto, inet_service, integer(4, 'host')],
    data: [ipv4_addr, inet_service],
    // nft 1.0.6 cannot write an integer inside a `type` concatenation: typeof, as the slots layout's maps.
    typeof: {
      key: [{ expr: 'payload', protocol: 'ip', field: 'daddr' }, { expr: 'meta', key: 'l4proto' }, { expr: 'payload', protocol: 'th', field: 'dport' }, { expr: 'numgen', mode: 'random', modulus: 1 }],
      data: [{ expr: 'payload', protocol: 'ip', field: 'daddr' }, { expr: 'payload', protocol: 'tcp', field: 'dport' }],
    },
  };
}

/** Shape 6's chain for the services of `endpoints` endpoints. */
export const balanceChain = (endpoints: number): string => `balance-${endpoints}`;

/** `meta l4proto tcp dnat ip to ip daddr . meta l4proto . th dport . numgen random mod N map @eps` */
export function balanceRule(endpoints: number): Rule {
  const key = [ip.daddr, meta.l4proto, th.dport, numgen('random', endpoints)];
  return rule(FAMILY).match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key, map: { name: balanceMap().name, set: balanceMap() } }).rule(TABLE, balanceChain(endpoints));
}

function* balanceElements(services: number, endpoints: number): Generator<SetElement> {
  for (let i = 0; i < services; i++) {
    for (let k = 0; k < endpoints; k++) yield { key: [serviceAddr(i), 'tcp', SERVICE_PORT, k], value: [endpointAddr(endpointSlot(i, k, endpoints)), ENDPOINT_PORT] };
  }
}

function* balanceDispatch(services: number, chain: string): Generator<SetElement> {
  for (let i = 0; i < services; i++) yield { key: [serviceAddr(i), 'tcp', SERVICE_PORT], value: { kind: 'goto', chain } };
}
