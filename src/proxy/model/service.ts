// Services -> ServicePorts, with kube-proxy's semantics (pkg/proxy/servicechangetracker.go,
// pkg/proxy/serviceport.go) and a strict validation in front of them. kube-proxy trusts the API
// server's validation; we also read hand-written manifests, so anything we cannot program exactly
// as written rejects the whole Service (one InvalidObject naming the field), never part of it.
// The sources have already checked the shape (k8s/validation: every field has the type
// k8s/objects.ts gives it); what is checked here is what the values mean.
//
// Validation is independent of the IP family, so a bad dual-stack Service is rejected in both
// proxiers with the same reason and reported once.

import { LABEL_SERVICE_PROXY_NAME, type Service } from '../../k8s/objects.js';
import { formatIPv4, formatIPv6, parseIPv4, parseIPv6, parsePrefix } from '../../nft/index.js';
import { flat } from '../flat-string.js';
import { creationTime } from './claims.js';
import type { InvalidObject, IPFamily, Protocol, ServicePort, TrafficPolicy } from './types.js';

export type ServicePortsResult = { ports: ServicePort[] } | { invalid: InvalidObject } | { skipped: string };

/** A validated Service, with every address already split by family and in canonical text. */
export interface ServiceInfo {
  namespace: string;
  name: string;
  /** metadata.creationTimestamp in ms (Infinity when none): who keeps an address two Services claim (claims.ts). */
  createdAt: number;
  type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  clusterIPs: Record<IPFamily, string | undefined>;
  ports: { portName: string; protocol: Protocol; port: number; nodePort: number }[];
  externalIPs: AddressesByFamily;
  loadBalancerIPs: AddressesByFamily;
  loadBalancerSourceRanges: AddressesByFamily;
  externalTrafficPolicy: TrafficPolicy;
  internalTrafficPolicy: TrafficPolicy;
  affinityTimeoutSeconds: number;
  healthCheckNodePort: number;
  external: boolean;
}

export type ServiceReadResult = { service: ServiceInfo } | { invalid: InvalidObject } | { skipped: string };

/** An address with its family, in the text nft lists it with (so equal addresses compare equal). */
export interface FamilyIP {
  family: IPFamily;
  bytes: Uint8Array;
  text: string;
}

/** Addresses or CIDRs of a Service, split by family. */
export type AddressesByFamily = Readonly<Record<IPFamily, readonly string[]>>;

/** One frozen empty list for every service port without external IPs, LB IPs or source ranges (most of them). */
const EMPTY: readonly string[] = Object.freeze([]);
const orEmpty = (list: readonly string[]): readonly string[] => (list.length ? list : EMPTY);
/** And one frozen pair of them for every Service: the model keeps three such pairs per Service. */
const NONE: AddressesByFamily = Object.freeze({ ipv4: EMPTY, ipv6: EMPTY });
const orNone = (lists: Record<IPFamily, string[]>): AddressesByFamily => (lists.ipv4.length || lists.ipv6.length ? lists : NONE);

export const IP_FAMILIES: readonly IPFamily[] = ['ipv4', 'ipv6'];
export const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];

/** The API's names for the families (spec.ipFamilies, EndpointSlice addressType). */
export const API_FAMILY_NAME: Record<IPFamily, string> = { ipv4: 'IPv4', ipv6: 'IPv6' };

/** The Kubernetes default session affinity timeout (core/v1 DefaultClientIPServiceAffinitySeconds). */
export const DEFAULT_AFFINITY_TIMEOUT_SECONDS = 10800;
/** The API's upper bound for sessionAffinityConfig.clientIP.timeoutSeconds (MaxClientIPServiceAffinitySeconds). */
export const MAX_AFFINITY_TIMEOUT_SECONDS = 86400;

const MAX_NAME_LENGTH = 253; // DNS-1123 subdomain
const MAX_NAMESPACE_LENGTH = 63; // DNS-1123 label
const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer'] as const;
const TRAFFIC_POLICIES: readonly string[] = ['Cluster', 'Local'];

/** The ServicePorts of one family, or why the Service is rejected or not ours to program. */
export function servicePorts(svc: Service, family: IPFamily): ServicePortsResult {
  const read = readService(svc);
  return 'service' in read ? servicePortsOfFamily(read.service, family) : read;
}

/** Validates a Service once for both families; servicePortsOfFamily then picks one. */
export function readService(svc: Service): ServiceReadResult {
  const skipped = skipReason(svc);
  if (skipped) return { skipped };
  try {
    return { service: validateService(svc) };
  } catch (err) {
    if (!(err instanceof InvalidFieldError)) throw err;
    return { invalid: { kind: 'Service', ref: objectRef(svc.metadata), reason: err.message } };
  }
}

/** One answer per family, not one per service: every service of the other family asks at every snapshot. */
const NO_CLUSTER_IP: Readonly<Record<IPFamily, { skipped: string }>> = Object.freeze({
  ipv4: Object.freeze({ skipped: `no ${API_FAMILY_NAME.ipv4} ClusterIP` }),
  ipv6: Object.freeze({ skipped: `no ${API_FAMILY_NAME.ipv6} ClusterIP` }),
});

/** kube-proxy's serviceToServiceMap: a service without a ClusterIP of a family is nothing to that family's proxier. */
export function hasClusterIPOf(info: ServiceInfo, family: IPFamily): boolean {
  return Boolean(info.clusterIPs[family]);
}

export function servicePortsOfFamily(info: ServiceInfo, family: IPFamily): ServicePortsResult {
  if (!hasClusterIPOf(info, family)) return NO_CLUSTER_IP[family];
  const clusterIP = info.clusterIPs[family]!;
  // healthCheckNodePort is only served for LoadBalancer + ETP Local (apiservice.NeedsHealthCheck);
  // kube-proxy logs an error and serves none when the API left it 0.
  const needsHealthCheck = info.type === 'LoadBalancer' && info.externalTrafficPolicy === 'Local';
  const ports = info.ports.map(
    (p): ServicePort => ({
      id: servicePortId(info.namespace, info.name, p.portName),
      namespace: info.namespace,
      name: info.name,
      portName: p.portName,
      protocol: p.protocol,
      family,
      clusterIP,
      port: p.port,
      nodePort: p.nodePort,
      externalIPs: orEmpty(info.externalIPs[family]),
      loadBalancerIPs: orEmpty(info.loadBalancerIPs[family]),
      loadBalancerSourceRanges: orEmpty(info.loadBalancerSourceRanges[family]),
      externalTrafficPolicy: info.externalTrafficPolicy,
      internalTrafficPolicy: info.internalTrafficPolicy,
      affinityTimeoutSeconds: info.affinityTimeoutSeconds,
      healthCheckNodePort: needsHealthCheck ? info.healthCheckNodePort : 0,
      external: info.external,
    }),
  );
  return { ports };
}

/** kube-proxy's ServicePortName.String(). */
export function servicePortId(namespace: string, name: string, portName: string): string {
  return flat(namespace, '/', name, ':', portName);
}

/** "namespace/name" for messages, with placeholders so a nameless object is still recognisable. */
export function objectRef(meta: { name?: string; namespace?: string } | undefined): string {
  const ns = typeof meta?.namespace === 'string' && meta.namespace !== '' ? meta.namespace : '<no namespace>';
  const name = typeof meta?.name === 'string' && meta.name !== '' ? meta.name : '<no name>';
  return `${ns}/${name}`;
}

/** An IPv4 or IPv6 address, or null. The one place the proxy model turns address text into a family. */
export function parseFamilyIP(text: unknown): FamilyIP | null {
  if (typeof text !== 'string') return null;
  const v4 = parseIPv4(text);
  if (v4) return { family: 'ipv4', bytes: v4, text: canonical(text, formatIPv4(v4)) };
  const v6 = parseIPv6(text);
  if (v6) return { family: 'ipv6', bytes: v6, text: canonical(text, formatIPv6(v6)) };
  return null;
}

/**
 * The canonical text of an address of `family`, or null when `text` is no address of that family.
 * The endpoints' addresses come here (50k at 10k services x 5): an IPv4 address already written
 * canonically, nearly every one, is the input itself, checked without parsing it into bytes.
 */
export function canonicalAddress(text: unknown, family: IPFamily): string | null {
  if (typeof text !== 'string') return null;
  if (family === 'ipv4' && isCanonicalIPv4(text)) return text;
  const ip = parseFamilyIP(text);
  return ip && ip.family === family ? ip.text : null;
}

/** "a.b.c.d", each part 0-255 in decimal without leading zeros: what formatIPv4 writes. */
function isCanonicalIPv4(text: string): boolean {
  let parts = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0x2e; // a final '.' closes the last part
    if (c === 0x2e) {
      if (digits === 0 || value > 255) return false;
      parts++;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits === 1 && value === 0) return false; // a leading zero
      value = value * 10 + (c - 0x30);
      if (++digits > 3) return false;
    } else return false;
  }
  return parts === 4;
}

/** An address's family and canonical text (no bytes: a canonical IPv4 address is not parsed). */
function addressOf(text: unknown): { family: IPFamily; text: string } | null {
  if (typeof text === 'string' && isCanonicalIPv4(text)) return { family: 'ipv4', text };
  return parseFamilyIP(text);
}

/**
 * The input when it is already canonical (nearly always): the model keeps one address per endpoint
 * for as long as it runs, and the formatted text is a rope of concatenated pieces, several heap
 * objects where the parsed input is one flat string.
 */
function canonical(input: string, formatted: string): string {
  return input === formatted ? input : formatted;
}

/** Thrown inside validation only; the readers turn it into an InvalidObject ("field: problem"). */
export class InvalidFieldError extends Error {}

export function fail(field: string, problem: string): never {
  throw new InvalidFieldError(`${field}: ${problem}`);
}

/**
 * Services kube-proxy never programs. The label is excluded by kube-proxy's informer label selector
 * (cmd/kube-proxy/app/server.go), ExternalName and headless by proxyutil.ShouldSkipService.
 */
function skipReason(svc: Service): string | undefined {
  const proxyName = svc.metadata?.labels?.[LABEL_SERVICE_PROXY_NAME];
  if (proxyName !== undefined) return `label ${LABEL_SERVICE_PROXY_NAME}=${proxyName}: handled by another proxy`;
  if (svc.spec?.type === 'ExternalName') return 'type ExternalName';
  const primary = svc.spec?.clusterIP || svc.spec?.clusterIPs?.[0];
  if (!primary || primary === 'None') return 'headless (no ClusterIP)';
  return undefined;
}

function validateService(svc: Service): ServiceInfo {
  const { namespace, name } = validateMeta(svc.metadata);
  const spec = svc.spec ?? {};
  const type = spec.type ?? 'ClusterIP';
  if (!(SERVICE_TYPES as readonly string[]).includes(type)) fail('spec.type', `unknown type ${JSON.stringify(type)}`);
  const serviceType = type as ServiceInfo['type'];
  const externalIPs = addressesByFamily(spec.externalIPs, 'spec.externalIPs');
  const external = serviceType !== 'ClusterIP' || Object.values(externalIPs).some((ips) => ips.length > 0);
  const externalTrafficPolicy = trafficPolicy(spec.externalTrafficPolicy, 'spec.externalTrafficPolicy');
  const healthCheckNodePort = spec.healthCheckNodePort ?? 0;
  if (healthCheckNodePort !== 0) checkPort(healthCheckNodePort, 'spec.healthCheckNodePort');
  return {
    namespace,
    name,
    createdAt: creationTime(svc.metadata?.creationTimestamp),
    type: serviceType,
    clusterIPs: clusterIPsByFamily(spec),
    ports: validatePorts(spec.ports, serviceType),
    externalIPs,
    loadBalancerIPs: loadBalancerIPs(svc.status?.loadBalancer?.ingress),
    loadBalancerSourceRanges: sourceRanges(spec.loadBalancerSourceRanges),
    // ExternalPolicyLocal: Local only counts for a service that takes external traffic.
    externalTrafficPolicy: external ? externalTrafficPolicy : 'Cluster',
    internalTrafficPolicy: trafficPolicy(spec.internalTrafficPolicy, 'spec.internalTrafficPolicy'),
    affinityTimeoutSeconds: affinityTimeout(spec),
    healthCheckNodePort,
    external,
  };
}

function validateMeta(meta: Service['metadata']): { namespace: string; name: string } {
  const name = meta?.name;
  const namespace = meta?.namespace;
  if (typeof name !== 'string' || name === '') fail('metadata.name', 'missing');
  if (name.length > MAX_NAME_LENGTH) fail('metadata.name', `${name.length} characters, more than ${MAX_NAME_LENGTH}`);
  if (typeof namespace !== 'string' || namespace === '') fail('metadata.namespace', 'missing');
  if (namespace.length > MAX_NAMESPACE_LENGTH) {
    fail('metadata.namespace', `${namespace.length} characters, more than ${MAX_NAMESPACE_LENGTH}`);
  }
  return { namespace, name };
}

/**
 * The ClusterIP of each family, as proxyutil.GetClusterIPByFamily picks it: spec.clusterIPs[i] is
 * the address of spec.ipFamilies[i]; with no ipFamilies (objects from before dual-stack), the family
 * of the address itself. Each address must parse as the family it is declared for.
 */
function clusterIPsByFamily(spec: NonNullable<Service['spec']>): Record<IPFamily, string | undefined> {
  const singular = spec.clusterIP;
  const list = spec.clusterIPs;
  const fromList = list !== undefined && list.length > 0;
  if (fromList && singular && list[0] !== singular) fail('spec.clusterIP', `${singular} is not spec.clusterIPs[0] (${list[0]})`);
  const out: Record<IPFamily, string | undefined> = { ipv4: undefined, ipv6: undefined };
  const count = fromList ? list.length : singular ? 1 : 0;
  for (let i = 0; i < count; i++) {
    const text = fromList ? list[i] : singular;
    const ip = addressOf(text);
    // Messages (and their field paths) are only built for a Service that fails: this runs per Service.
    const where = (): string => (fromList ? `spec.clusterIPs[${i}]` : 'spec.clusterIP');
    if (!ip) fail(where(), `${JSON.stringify(text)} is not an IP address`);
    const apiName = spec.ipFamilies?.[i];
    if (apiName !== undefined) {
      const expected = IP_FAMILIES.find((f) => API_FAMILY_NAME[f] === apiName);
      if (!expected) fail(`spec.ipFamilies[${i}]`, `unknown family ${JSON.stringify(apiName)} (IPv4 or IPv6)`);
      if (expected !== ip.family) fail(where(), `${text} is not an ${API_FAMILY_NAME[expected]} address (spec.ipFamilies[${i}] is ${API_FAMILY_NAME[expected]})`);
    }
    if (out[ip.family]) fail(where(), `a second ${API_FAMILY_NAME[ip.family]} ClusterIP (${text})`);
    out[ip.family] = ip.text;
  }
  // ipFamilies beyond the addresses are still checked.
  spec.ipFamilies?.forEach((apiName, i) => {
    if (!IP_FAMILIES.some((f) => API_FAMILY_NAME[f] === apiName)) fail(`spec.ipFamilies[${i}]`, `unknown family ${JSON.stringify(apiName)} (IPv4 or IPv6)`);
  });
  return out;
}

function validatePorts(ports: NonNullable<Service['spec']>['ports'], type: ServiceInfo['type']): ServiceInfo['ports'] {
  if (!ports || ports.length === 0) fail('spec.ports', 'a Service with a ClusterIP needs at least one port');
  const out: ServiceInfo['ports'] = new Array(ports.length);
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i]!;
    // Field paths are built only for a port that fails (this runs per Service port).
    const field = (): string => `spec.ports[${i}]`;
    const portName = p.name ?? '';
    const protocol = isProtocol(p.protocol) ? (p.protocol ?? 'TCP') : protocolOf(p.protocol, `${field()}.protocol`);
    const port = isPort(p.port) ? p.port : checkPort(p.port, `${field()}.port`);
    const nodePort = p.nodePort ?? 0;
    if (nodePort !== 0) {
      if (!isPort(nodePort)) checkPort(nodePort, `${field()}.nodePort`);
      if (type === 'ClusterIP') fail(`${field()}.nodePort`, 'may not be set when type is ClusterIP');
    }
    // A Service has a handful of ports: compared with the ones before, no Map per Service.
    for (let j = 0; j < i; j++) {
      if (out[j]!.portName === portName) fail(`${field()}.name`, `${JSON.stringify(portName)} duplicates spec.ports[${j}]`);
      if (out[j]!.port === port && out[j]!.protocol === protocol) fail(field(), `${port}/${protocol} duplicates spec.ports[${j}]`);
    }
    out[i] = { portName, protocol, port, nodePort };
  }
  return out;
}

const isProtocol = (value: unknown): value is Protocol | undefined | null => value === undefined || value === null || (PROTOCOLS as readonly unknown[]).includes(value);
const isPort = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;

/** TCP when unset, as the API defaults it; anything else than the three protocols is invalid. */
export function protocolOf(value: unknown, field: string): Protocol {
  if (value === undefined || value === null) return 'TCP';
  if (!(PROTOCOLS as readonly unknown[]).includes(value)) {
    fail(field, `unsupported protocol ${JSON.stringify(value)} (TCP, UDP or SCTP)`);
  }
  return value as Protocol;
}

/** A port number in 1..65535. */
export function checkPort(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(field, `${JSON.stringify(value)} is not a port number`);
  if (value < 1 || value > 65535) fail(field, `${value} is out of range (1-65535)`);
  return value;
}

function trafficPolicy(value: unknown, field: string): TrafficPolicy {
  if (value === undefined || value === null || value === '') return 'Cluster';
  if (!TRAFFIC_POLICIES.includes(value as string)) fail(field, `unknown policy ${JSON.stringify(value)} (Cluster or Local)`);
  return value as TrafficPolicy;
}

function affinityTimeout(spec: NonNullable<Service['spec']>): number {
  const affinity = spec.sessionAffinity ?? 'None';
  if (affinity === 'None') return 0;
  if (affinity !== 'ClientIP') fail('spec.sessionAffinity', `unknown affinity ${JSON.stringify(affinity)} (None or ClientIP)`);
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_TIMEOUT_SECONDS;
  const field = 'spec.sessionAffinityConfig.clientIP.timeoutSeconds';
  if (timeout < 1 || timeout > MAX_AFFINITY_TIMEOUT_SECONDS) {
    fail(field, `${JSON.stringify(timeout)} is out of range (1-${MAX_AFFINITY_TIMEOUT_SECONDS})`);
  }
  return timeout;
}

/** Every entry must be an address; kube-proxy's MapIPsByIPFamily then keeps this family's, de-duplicated. */
function addressesByFamily(list: readonly string[] | undefined, field: string): AddressesByFamily {
  const out: Record<IPFamily, string[]> = { ipv4: [], ipv6: [] };
  (list ?? []).forEach((text, i) => {
    const ip = parseFamilyIP(text);
    if (!ip) fail(`${field}[${i}]`, `${JSON.stringify(text)} is not an IP address`);
    if (!out[ip.family].includes(ip.text)) out[ip.family].push(ip.text);
  });
  return orNone(out);
}

/**
 * status.loadBalancer.ingress[].ip in VIP mode (ipMode unset or "VIP"). "Proxy" mode load balancers
 * deliver to the node, not to the VIP, so kube-proxy does not capture their IPs (proxyutil.IsVIPMode).
 * Hostname-only entries carry nothing to program.
 */
function loadBalancerIPs(ingress: NonNullable<NonNullable<Service['status']>['loadBalancer']>['ingress']): AddressesByFamily {
  const out: Record<IPFamily, string[]> = { ipv4: [], ipv6: [] };
  (ingress ?? []).forEach((entry, i) => {
    const field = `status.loadBalancer.ingress[${i}]`;
    const mode = entry.ipMode ?? 'VIP';
    if (mode !== 'VIP' && mode !== 'Proxy') fail(`${field}.ipMode`, `unknown mode ${JSON.stringify(mode)} (VIP or Proxy)`);
    if (entry.ip === undefined || entry.ip === '') return;
    const ip = parseFamilyIP(entry.ip);
    if (!ip) fail(`${field}.ip`, `${JSON.stringify(entry.ip)} is not an IP address`);
    if (mode === 'VIP' && !out[ip.family].includes(ip.text)) out[ip.family].push(ip.text);
  });
  return orNone(out);
}

/**
 * CIDRs, trimmed as kube-proxy trims them, split by family (MapCIDRsByIPFamily) and written
 * canonically ("10.0.0.0/8"). As in kube-proxy, ranges only of the other family leave this family
 * without a firewall.
 */
function sourceRanges(list: string[] | undefined): AddressesByFamily {
  const out: Record<IPFamily, string[]> = { ipv4: [], ipv6: [] };
  (list ?? []).forEach((raw, i) => {
    const text = raw.trim();
    const ipv4 = parsePrefix(text, 4);
    const prefix = ipv4 ?? parsePrefix(text, 6);
    if (!prefix) fail(`spec.loadBalancerSourceRanges[${i}]`, `${JSON.stringify(raw)} is not a CIDR`);
    const family: IPFamily = ipv4 ? 'ipv4' : 'ipv6';
    const canonical = `${ipv4 ? formatIPv4(prefix.bytes) : formatIPv6(prefix.bytes)}/${prefix.length}`;
    if (!out[family].includes(canonical)) out[family].push(canonical);
  });
  return orNone(out);
}
