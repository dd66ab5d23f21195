// Every name kube-proxy's nftables mode gives an object, as a constant or as the function that
// makes it (pkg/proxy/nftables/proxier.go: servicePortChainNameBase, servicePortEndpointChainNameBase,
// hashAndTruncate). Other components (and people reading `nft list`) rely on these names.

import { hash as digest } from 'node:crypto';
import type { ServiceEndpoint, ServicePort } from '../model/types.js';

export const DEFAULT_TABLE = 'kube-proxy';
export const TABLE_COMMENT = 'rules for kube-proxy';

/** Base chains (Kubernetes 1.34 and later): name, type, hook, priority. */
export const BASE_CHAINS = [
  { name: 'filter-prerouting-pre-dnat', type: 'filter', hook: 'prerouting', priority: -110 },
  { name: 'filter-output-pre-dnat', type: 'filter', hook: 'output', priority: -110 },
  { name: 'filter-forward', type: 'filter', hook: 'forward', priority: 0 },
  { name: 'filter-input', type: 'filter', hook: 'input', priority: 0 },
  { name: 'filter-output', type: 'filter', hook: 'output', priority: 0 },
  { name: 'nat-output', type: 'nat', hook: 'output', priority: -100 },
  { name: 'nat-postrouting', type: 'nat', hook: 'postrouting', priority: 100 },
  { name: 'nat-prerouting', type: 'nat', hook: 'prerouting', priority: -100 },
] as const;

export const CHAIN = {
  clusterIpsCheck: 'cluster-ips-check',
  firewallCheck: 'firewall-check',
  masquerading: 'masquerading',
  nodeportEndpointsCheck: 'nodeport-endpoints-check',
  rejectChain: 'reject-chain',
  services: 'services',
  serviceEndpointsCheck: 'service-endpoints-check',
} as const;

export const SET = {
  clusterIps: 'cluster-ips',
  nodeportIps: 'nodeport-ips',
  hairpinConnections: 'hairpin-connections',
  firewallIps: 'firewall-ips',
  noEndpointNodeports: 'no-endpoint-nodeports',
  noEndpointServices: 'no-endpoint-services',
  serviceIps: 'service-ips',
  serviceNodeports: 'service-nodeports',
  localhostNodeports: 'localhost-nodeports',
} as const;

export const COMMENT = {
  clusterIps: 'Active ClusterIPs',
  nodeportIps: 'IPs that accept NodePort traffic',
  hairpinConnections: 'service hairpin connections',
  firewallIps: 'destinations that are subject to LoadBalancerSourceRanges',
  noEndpointNodeports: 'vmap to drop or reject packets to service nodeports with no endpoints',
  noEndpointServices: 'vmap to drop or reject packets to services with no endpoints',
  serviceIps: 'ClusterIP, ExternalIP and LoadBalancer IP traffic',
  serviceNodeports: 'NodePort traffic',
  rejectChain: 'helper for @no-endpoint-services / @no-endpoint-nodeports',
  rejectClusterIPs: 'Reject traffic to invalid ports of ClusterIPs',
  dropUnallocated: 'Drop traffic to unallocated ClusterIPs',
  masqueradeClusterIP: 'masquerade clusterIP traffic from outside cluster',
  shortCircuitPods: 'short-circuit pod traffic',
  masqueradeLocal: 'masquerade local traffic',
  shortCircuitLocal: 'short-circuit local traffic',
  localhostNodeports: 'UDP and SCTP NodePorts, which localhost does not serve',
} as const;

/**
 * K of a `<prefix>K` map name (K decimal digits), else undefined. Scanned by hand: a restart asks
 * this of every lookup in 10k rules, and a regular expression per call was a visible cost.
 */
function bucketOf(name: string, prefix: string): number | undefined {
  if (name.length === prefix.length || !name.startsWith(prefix)) return undefined;
  for (let i = prefix.length; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(name.slice(prefix.length));
}

/** The slots layout's bucket maps: `endpoints-<K>`, slot number to `addr . port`. */
export const slotMap = {
  name: (bucket: number): string => `endpoints-${bucket}`,
  /** The bucket of a map name, or undefined when the name is not a bucket map's. */
  bucket: (name: string): number | undefined => bucketOf(name, 'endpoints-'),
  comment: 'endpoints of service chains, by slot',
};

/**
 * The slots layout's service ports reached through their ClusterIP alone: no chain of their own.
 * `service-ips` sends each to the chain of its bucket, protocol and endpoint count, whose one rule
 * looks the packet's `daddr . l4proto . dport . numgen random mod N` up in the bucket's map
 * (slots/balance.ts).
 */
export const balance = {
  map: (bucket: number): string => `balance-${bucket}`,
  /** The bucket of a map name, or undefined when the name is not a balance map's. */
  bucket: (name: string): number | undefined => bucketOf(name, 'balance-'),
  chain: (bucket: number, protocol: string, endpoints: number): string => `balance-${bucket}-${protocol}-${endpoints}`,
  comment: 'endpoints of ClusterIP services: address . protocol . port . endpoint number',
};

/**
 * The slots layout's O(1) ClientIP affinity: per 64 service chains of a bucket a pins map (`client .
 * service id : endpoint`; slots/affinity.ts pinsMapOf), per service port a `pin-` chain that renews
 * the pin, and one dispatch map from an endpoint to the chain that pins clients to it.
 */
export const pins = {
  map: (bucket: number): string => `pins-${bucket}`,
  bucket: (name: string): number | undefined => bucketOf(name, 'pins-'),
  chain: (base: string): string => `pin-${base}`,
  dispatch: 'affinity-endpoints',
  mapComment: 'ClientIP affinity: client . service id : endpoint',
  dispatchComment: 'endpoints of ClientIP affinity services: the chain that renews the pin',
};

/** The comment of the rule that rejects (and counts) one protocol's NodePorts on localhost. */
export function localhostRejectComment(protocol: 'udp' | 'sctp'): string {
  return `reject ${protocol} to localhost NodePorts`;
}

/** knftables.NameLengthMax (256) minus room for the longest prefix (16). */
const MAX_BASE = 240;

/** Standard base32 (RFC 4648, upper case) of the first 5 bytes (given in hex): the 8 characters kube-proxy keeps. */
function base32First8(hex: string): string {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  // 40 bits fit a double exactly (no BigInt: this runs once per service chain per full sync).
  const bits = parseInt(hex.slice(0, 10), 16);
  // One flat string (appending char by char leaves a chain of 8 string pieces in every chain name).
  const c = (i: number): number => ALPHABET.charCodeAt(Math.floor(bits / 2 ** (i * 5)) % 32);
  return String.fromCharCode(c(7), c(6), c(5), c(4), c(3), c(2), c(1), c(0));
}

/** HASH-base, cut to 240 bytes (237 and "..."): the hash is over the whole string. */
function hashAndTruncate(base: string): string {
  // The one-shot hash (Node 20.12): no Hash object per name, 40% less time per service chain; as
  // hex, not a Buffer: a Buffer per name took 1.8-2.4 us of each call, hex 0.5 us (10k names).
  const hash = base32First8(digest('sha256', base, 'hex'));
  const name = `${hash}-${base}`;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most names need no count.
  if (name.length * 3 <= MAX_BASE || Buffer.byteLength(name) <= MAX_BASE) return name;
  return `${Buffer.from(name).subarray(0, MAX_BASE - 3).toString('utf8')}...`;
}

/** "<ns>/<svc>/<proto>/<portName>": the port's name, not its number. */
export function servicePortBase(sp: Pick<ServicePort, 'namespace' | 'name' | 'protocol' | 'portName'>): string {
  return `${sp.namespace}/${sp.name}/${sp.protocol.toLowerCase()}/${sp.portName}`;
}

/**
 * The endpoint as kube-proxy writes it in names: ip/port, IPv6 without brackets and ':' as '.'.
 * The address text is the EndpointSlice's, as written (kube-proxy does not re-format it).
 */
function endpointPart(ep: Pick<ServiceEndpoint, 'ip' | 'port'>): string {
  return `${ep.ip.replaceAll(':', '.')}/${ep.port}`;
}

/** Per service port object (the model replaces the object when the service changes): full syncs and restarts hash each name once. */
const chainBases = new WeakMap<object, string>();

export function serviceChainBase(sp: Parameters<typeof servicePortBase>[0]): string {
  let base = chainBases.get(sp);
  if (base === undefined) chainBases.set(sp, (base = hashAndTruncate(servicePortBase(sp))));
  return base;
}

/** Hashes these service ports' chain names ahead of a full plan (Layout.prepare). */
export function prepareChainBases(ports: readonly Parameters<typeof servicePortBase>[0][]): void {
  for (const sp of ports) serviceChainBase(sp);
}

export function endpointChainBase(sp: Parameters<typeof servicePortBase>[0], ep: Pick<ServiceEndpoint, 'ip' | 'port'>): string {
  return hashAndTruncate(`${servicePortBase(sp)}__${endpointPart(ep)}`);
}

export const chainName = {
  cluster: (base: string): string => `service-${base}`,
  local: (base: string): string => `local-${base}`,
  external: (base: string): string => `external-${base}`,
  firewall: (base: string): string => `firewall-${base}`,
  endpoint: (epBase: string): string => `endpoint-${epBase}`,
  affinity: (epBase: string): string => `affinity-${epBase}`,
};

/** Chains of service ports carry a '/' in their name; fixed chains never do (kube-proxy's stale-chain test). */
export function isServiceChain(name: string): boolean {
  return name.includes('/');
}

export function isAffinitySet(name: string): boolean {
  return name.startsWith('affinity-');
}

/** ServicePortName.String() ("ns/svc:port", or "ns/svc" when the port has no name), cut to 128 bytes. */
export function elementComment(sp: Pick<ServicePort, 'namespace' | 'name' | 'portName'>): string {
  const full = sp.portName ? `${sp.namespace}/${sp.name}:${sp.portName}` : `${sp.namespace}/${sp.name}`;
  if (Buffer.byteLength(full) <= 128) return full;
  let cut = Buffer.from(full).subarray(0, 128).toString('utf8');
  while (Buffer.byteLength(cut) > 128 || cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return cut;
}
