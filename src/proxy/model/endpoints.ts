// EndpointSlices -> per-ServicePort endpoint lists, as kube-proxy's EndpointSliceCache builds them
// (pkg/proxy/endpointslicecache.go). Reading (readEndpointSlice) is done once per slice version and
// validates the whole slice (its meaning: the sources have checked its shape, k8s/validation);
// merging (mergeEndpoints) combines every slice of one service for the ServicePorts of one family.

import { LABEL_HEADLESS, LABEL_SERVICE_NAME, LABEL_SERVICE_PROXY_NAME, type EndpointSlice } from '../../k8s/objects.js';
import { flat } from '../flat-string.js';
import { API_FAMILY_NAME, canonicalAddress, checkPort, fail, IP_FAMILIES, InvalidFieldError, objectRef, protocolOf } from './service.js';
import type { InvalidObject, IPFamily, Protocol, ServiceEndpoint, ServicePort } from './types.js';

/** One endpoint of a validated slice, before it is bound to a ServicePort's port number. */
export interface SliceEndpoint {
  /** The first address, canonical. */
  ip: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  nodeName?: string;
  zone?: string;
  /** hints.forZones / hints.forNodes names; absent when the slice gives none. */
  zoneHints?: readonly string[];
  nodeHints?: readonly string[];
}

/** A validated EndpointSlice of an IP family. */
export interface EndpointSliceInfo {
  namespace: string;
  name: string;
  /** "namespace/service", the key of the Service it belongs to. */
  serviceKey: string;
  family: IPFamily;
  ports: { name: string; protocol: Protocol; port: number }[];
  endpoints: SliceEndpoint[];
}

export type EndpointSliceReadResult = { slice: EndpointSliceInfo } | { invalid: InvalidObject } | { skipped: string };

/** "namespace/service" of the Service a slice belongs to, or undefined when it names none. */
export function sliceServiceKey(slice: EndpointSlice): string | undefined {
  const service = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
  const namespace = slice.metadata?.namespace;
  return service && namespace ? flat(namespace, '/', service) : undefined;
}

/** A slice as the model uses it; `before`: its read at the version before, whose strings it reuses (heldAddress). */
export function readEndpointSlice(slice: EndpointSlice, before?: EndpointSliceInfo): EndpointSliceReadResult {
  const labels = slice.metadata?.labels ?? {};
  // Excluded by kube-proxy's informer label selector (cmd/kube-proxy/app/server.go), like their Services.
  if (labels[LABEL_SERVICE_PROXY_NAME] !== undefined) return { skipped: `label ${LABEL_SERVICE_PROXY_NAME}: handled by another proxy` };
  if (labels[LABEL_HEADLESS] !== undefined) return { skipped: `label ${LABEL_HEADLESS}: headless service` };
  // FQDN slices carry names, not addresses; kube-proxy's trackers only take their own family.
  if (slice.addressType === 'FQDN') return { skipped: 'addressType FQDN' };
  try {
    return { slice: validateSlice(slice, before) };
  } catch (err) {
    if (!(err instanceof InvalidFieldError)) throw err;
    return { invalid: { kind: 'EndpointSlice', ref: objectRef(slice.metadata), reason: err.message } };
  }
}

function hintNames(hints: readonly { name?: string }[] | undefined, field: string): string[] | undefined {
  if (hints === undefined) return undefined;
  const names = hints.map((h, j) => {
    if (!h.name) fail(`${field}[${j}].name`, 'missing');
    return h.name;
  });
  return names.length ? names : undefined;
}

/**
 * Node and zone names, one string each however many endpoints name them: a cluster has few nodes
 * and the model keeps a name per endpoint (every parsed object brings its own copy). Bounded, so
 * that a stream of made-up names costs no more than the copies would.
 */
class NameTable {
  private readonly names = new Map<string, string>();
  constructor(private readonly max: number) {}
  intern(name: string): string {
    const known = this.names.get(name);
    if (known !== undefined) return known;
    if (this.names.size < this.max) this.names.set(name, name);
    return name;
  }
}
const nodeNames = new NameTable(50_000);

/**
 * `ip`, as the string the slice's read before held it when it had the address at or next to
 * position `i`: the model, the element stores and the slot allocator keep whichever copy they got
 * first, so every event's copy of an unchanged address would otherwise stay beside the first one
 * (docs/decisions.md, "A churned slice's strings are kept once").
 */
function heldAddress(ip: string, before: readonly SliceEndpoint[] | undefined, i: number): string {
  if (before === undefined) return ip;
  const at = before[i]?.ip;
  if (at === ip) return at;
  const prev = before[i - 1]?.ip;
  if (prev === ip) return prev;
  const next = before[i + 1]?.ip;
  return next === ip ? next : ip;
}

function validateSlice(slice: EndpointSlice, before: EndpointSliceInfo | undefined): EndpointSliceInfo {
  const name = slice.metadata?.name;
  const namespace = slice.metadata?.namespace;
  if (typeof name !== 'string' || name === '') fail('metadata.name', 'missing');
  if (typeof namespace !== 'string' || namespace === '') fail('metadata.namespace', 'missing');
  const serviceKey = sliceServiceKey(slice);
  if (!serviceKey) fail(`metadata.labels[${LABEL_SERVICE_NAME}]`, 'missing: the slice belongs to no Service');
  const family = IP_FAMILIES.find((f) => API_FAMILY_NAME[f] === slice.addressType);
  if (!family) fail('addressType', `unknown address type ${JSON.stringify(slice.addressType)} (IPv4, IPv6 or FQDN)`);
  const ports = (slice.ports ?? []).map((p, i) => {
    const portName = p.name ?? '';
    return { name: portName, protocol: protocolOf(p.protocol, `ports[${i}].protocol`), port: checkPort(p.port, `ports[${i}].port`) };
  });
  const endpoints = (slice.endpoints ?? []).map((ep, i): SliceEndpoint => {
    const addresses = ep.addresses;
    if (addresses.length === 0) fail(`endpoints[${i}].addresses`, 'empty');
    // kube-proxy uses the first address only: the API defines the others as fungible copies. All
    // must be addresses of the slice's family.
    let first: string | undefined;
    for (let j = 0; j < addresses.length; j++) {
      const ip = canonicalAddress(addresses[j], family);
      if (ip === null) fail(`endpoints[${i}].addresses[${j}]`, `${JSON.stringify(addresses[j])} is not an ${slice.addressType} address (addressType ${slice.addressType})`);
      first ??= ip;
    }
    const conditions = ep.conditions ?? {};
    // kube-proxy's addEndpoints: ready and serving default to true, terminating to false. (The
    // older API text said a nil serving defers to ready; kube-proxy and the current API say true.)
    const ready = conditions.ready ?? true;
    const serving = conditions.serving ?? true;
    const terminating = conditions.terminating ?? false;
    // The usual shapes as one literal each: a property added to an object literal goes to a
    // backing store of its own (32 bytes an endpoint, 50k endpoints at 10k services x 5).
    const ip = heldAddress(first!, before?.endpoints, i);
    const out: SliceEndpoint = ep.nodeName ? { ip, ready, serving, terminating, nodeName: nodeNames.intern(ep.nodeName) } : { ip, ready, serving, terminating };
    if (ep.zone) out.zone = nodeNames.intern(ep.zone);
    const zoneHints = hintNames(ep.hints?.forZones, `endpoints[${i}].hints.forZones`);
    const nodeHints = hintNames(ep.hints?.forNodes, `endpoints[${i}].hints.forNodes`);
    if (zoneHints) out.zoneHints = zoneHints;
    if (nodeHints) out.nodeHints = nodeHints;
    return out;
  });
  return { namespace, name, serviceKey, family, ports, endpoints };
}

/** kube-proxy's Endpoint.String(): net.JoinHostPort(ip, port). */
const endpointString = (ep: Pick<ServiceEndpoint, 'ip' | 'port'>): string => (ep.ip.includes(':') ? `[${ep.ip}]:${ep.port}` : `${ep.ip}:${ep.port}`);

/**
 * The order of a ServicePort's endpoints: kube-proxy's byEndpoint (pkg/proxy/endpointslicecache.go),
 * its String() compared as text, so "10.244.0.10:9898" comes before "10.244.0.8:9898". The order
 * is visible: it numbers the entries of kube-proxy's numgen maps.
 */
export function compareEndpoints(a: Pick<ServiceEndpoint, 'ip' | 'port'>, b: Pick<ServiceEndpoint, 'ip' | 'port'>): number {
  const x = endpointString(a);
  const y = endpointString(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The endpoints of each ServicePort (every one gets a list, possibly empty; the lists in the order
 * of `ports`) from the slices of its service. A slice port serves the ServicePort with the same
 * name and protocol (kube-proxy keys both by ServicePortName). The same ip:port may appear in
 * several slices while the controller moves it; kube-proxy keeps one, and so do we, preferring the
 * copy that can take traffic.
 */
export function mergeEndpoints(ports: readonly ServicePort[], slices: readonly EndpointSliceInfo[], nodeName: string, zone = ''): ServiceEndpoint[][] {
  // Every endpoint of every service passes here on a cold start (50k at 10k services x 5), so the
  // usual case allocates little besides what it returns: no Map per service (a service has a
  // handful of ports), each candidate's ip:port text computed once, the lists sorted in place by
  // it; the copies of one ip:port (an endpoint moving between slices) are adjacent then, where
  // the best one is picked.
  const candidates: Merged[][] = ports.map(() => []);
  // Slice order only decides between equally good copies; sort so that it is not arrival order.
  const ordered = slices.length > 1 ? [...slices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : slices;
  for (const slice of ordered) {
    for (const port of slice.ports) {
      const i = ports.findIndex((p) => p.portName === port.name && p.protocol === port.protocol);
      if (i < 0 || ports[i]!.family !== slice.family) continue;
      const list = candidates[i]!;
      for (const source of slice.endpoints) {
        const ep = serviceEndpoint(source, port.port, nodeName);
        list.push({ ep, source, key: endpointString(ep) });
      }
    }
  }
  return candidates.map((list) => {
    sortByKey(list);
    const kept = dropCopies(list);
    applyTopology(kept, nodeName, zone);
    const eps = new Array<ServiceEndpoint>(kept.length);
    for (let i = 0; i < kept.length; i++) eps[i] = kept[i]!.ep;
    return eps;
  });
}

/**
 * Sorts by ip:port text, stably (copies keep slice order). Insertion sort for the usual handful:
 * Array.prototype.sort copies every list it sorts (10k copies on a cold start).
 */
function sortByKey(list: Merged[]): void {
  if (list.length > 32) {
    list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return;
  }
  for (let i = 1; i < list.length; i++) {
    const m = list[i]!;
    let j = i - 1;
    for (; j >= 0 && list[j]!.key > m.key; j--) list[j + 1] = list[j]!;
    list[j + 1] = m;
  }
}

/** Of each run of one ip:port in a sorted list, the first copy that can take the most traffic. */
function dropCopies(sorted: Merged[]): Merged[] {
  let copies = false;
  for (let i = 1; i < sorted.length && !copies; i++) copies = sorted[i]!.key === sorted[i - 1]!.key;
  if (!copies) return sorted;
  const out: Merged[] = [];
  for (const m of sorted) {
    const last = out[out.length - 1];
    if (last === undefined || last.key !== m.key) out.push(m);
    else if (preference(m.ep) > preference(last.ep)) out[out.length - 1] = m;
  }
  return out;
}

/**
 * Topology-aware routing, as kube-proxy's topologyModeFromHints and availableForTopology
 * (pkg/proxy/topology.go, PreferSameTrafficDistribution on, as in 1.35+): when every ready
 * endpoint has node hints and one is hinted for this node, Cluster traffic goes to the endpoints
 * hinted for this node; else when every ready endpoint has zone hints and one is for this node's
 * zone, to those hinted for the zone; else to all. The others are marked outsideTopology. With no
 * ready endpoint at all there is nothing to prefer.
 */
interface Merged {
  ep: ServiceEndpoint;
  source: SliceEndpoint;
  /** endpointString(ep): the sort key, computed once. */
  key: string;
}

function applyTopology(list: readonly Merged[], nodeName: string, zone: string): void {
  let ready = false;
  let allNode = true;
  let forNode = false;
  let allZone = true;
  let forZone = false;
  for (const { ep, source: s } of list) {
    if (!ep.ready) continue;
    ready = true;
    if (!s.nodeHints) allNode = false;
    else if (s.nodeHints.includes(nodeName)) forNode = true;
    if (!s.zoneHints) allZone = false;
    else if (s.zoneHints.includes(zone)) forZone = true;
  }
  if (!ready) return;
  const keep = allNode && forNode ? (s: SliceEndpoint) => s.nodeHints?.includes(nodeName) === true : allZone && forZone ? (s: SliceEndpoint) => s.zoneHints?.includes(zone) === true : undefined;
  if (!keep) return;
  for (const { ep, source } of list) if (!keep(source)) ep.outsideTopology = true;
}

function serviceEndpoint(source: SliceEndpoint, port: number, nodeName: string): ServiceEndpoint {
  const isLocal = nodeName !== '' && source.nodeName === nodeName;
  const { ip, ready, serving, terminating } = source;
  // The usual endpoint (a node, no zone) in one object literal: its fields then all live in the
  // object, where a field added afterwards takes a second heap object (50k of them at 10k x 5).
  if (source.zone === undefined) {
    return source.nodeName === undefined ? { ip, port, ready, serving, terminating, isLocal } : { ip, port, ready, serving, terminating, isLocal, nodeName: source.nodeName };
  }
  const ep: ServiceEndpoint = { ip, port, ready, serving, terminating, isLocal };
  if (source.nodeName !== undefined) ep.nodeName = source.nodeName;
  ep.zone = source.zone;
  return ep;
}

/** Ready over serving over neither; then local, as kube-proxy favours isLocal between duplicates. */
function preference(ep: ServiceEndpoint): number {
  return (ep.ready ? 4 : 0) + (ep.serving ? 2 : 0) + (ep.isLocal ? 1 : 0);
}
