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
  externalIPs: Record<IPFamily, string[]>;
  loadBalancerIPs: Record<IPFamily, string[]>;
  loadBalancerSourceRanges: Record<IPFamily, string[]>;
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

/** One frozen empty list for every service port without external IPs, LB IPs or source ranges (most of them). */
const EMPTY: readonly string[] = Object.freeze([]);
const orEmpty = (list: readonly string[]): readonly string[] => (list.length ? list : EMPTY);

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

export function servicePortsOfFamily(info: ServiceInfo, family: IPFamily): ServicePortsResult {
  const clusterIP = info.clusterIPs[family];
  // kube-proxy's serviceToServiceMap: no ClusterIP of this family, nothing for this proxier.
  if (!clusterIP) return { skipped: `no ${API_FAMILY_NAME[family]} ClusterIP` };
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
  return `${namespace}/${name}:${portName}`;
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
  if (v4) return { family: 'ipv4', bytes: v4, text: formatIPv4(v4) };
  const v6 = parseIPv6(text);
  if (v6) return { family: 'ipv6', bytes: v6, text: formatIPv6(v6) };
  return null;
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
  const fromList = (spec.clusterIPs?.length ?? 0) > 0;
  const list = fromList ? spec.clusterIPs! : singular ? [singular] : [];
  if (fromList && singular && list[0] !== singular) fail('spec.clusterIP', `${singular} is not spec.clusterIPs[0] (${list[0]})`);
  const declared = (spec.ipFamilies ?? []).map((apiName, i) => {
    const family = IP_FAMILIES.find((f) => API_FAMILY_NAME[f] === apiName);
    if (!family) fail(`spec.ipFamilies[${i}]`, `unknown family ${JSON.stringify(apiName)} (IPv4 or IPv6)`);
    return family;
  });
  const out: Record<IPFamily, string | undefined> = { ipv4: undefined, ipv6: undefined };
  list.forEach((text, i) => {
    const where = fromList ? `spec.clusterIPs[${i}]` : 'spec.clusterIP';
    const ip = parseFamilyIP(text);
    if (!ip) fail(where, `${JSON.stringify(text)} is not an IP address`);
    const expected = declared[i];
    if (expected && expected !== ip.family) {
      fail(where, `${text} is not an ${API_FAMILY_NAME[expected]} address (spec.ipFamilies[${i}] is ${API_FAMILY_NAME[expected]})`);
    }
    if (out[ip.family]) fail(where, `a second ${API_FAMILY_NAME[ip.family]} ClusterIP (${text})`);
    out[ip.family] = ip.text;
  });
  return out;
}

function validatePorts(ports: NonNullable<Service['spec']>['ports'], type: ServiceInfo['type']): ServiceInfo['ports'] {
  if (!ports || ports.length === 0) fail('spec.ports', 'a Service with a ClusterIP needs at least one port');
  const byName = new Map<string, number>();
  const byPort = new Map<string, number>();
  return ports.map((p, i) => {
    const field = `spec.ports[${i}]`;
    const portName = p.name ?? '';
    const protocol = protocolOf(p.protocol, `${field}.protocol`);
    const port = checkPort(p.port, `${field}.port`);
    const nodePort = p.nodePort ?? 0;
    if (nodePort !== 0) {
      checkPort(nodePort, `${field}.nodePort`);
      if (type === 'ClusterIP') fail(`${field}.nodePort`, 'may not be set when type is ClusterIP');
    }
    const sameName = byName.get(portName);
    if (sameName !== undefined) fail(`${field}.name`, `${JSON.stringify(portName)} duplicates spec.ports[${sameName}]`);
    byName.set(portName, i);
    const pair = `${port}/${protocol}`;
    const samePort = byPort.get(pair);
    if (samePort !== undefined) fail(field, `${pair} duplicates spec.ports[${samePort}]`);
    byPort.set(pair, i);
    return { portName, protocol, port, nodePort };
  });
}

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
function addressesByFamily(list: readonly string[] | undefined, field: string): Record<IPFamily, string[]> {
  const out: Record<IPFamily, string[]> = { ipv4: [], ipv6: [] };
  (list ?? []).forEach((text, i) => {
    const ip = parseFamilyIP(text);
    if (!ip) fail(`${field}[${i}]`, `${JSON.stringify(text)} is not an IP address`);
    if (!out[ip.family].includes(ip.text)) out[ip.family].push(ip.text);
  });
  return out;
}

/**
 * status.loadBalancer.ingress[].ip in VIP mode (ipMode unset or "VIP"). "Proxy" mode load balancers
 * deliver to the node, not to the VIP, so kube-proxy does not capture their IPs (proxyutil.IsVIPMode).
 * Hostname-only entries carry nothing to program.
 */
function loadBalancerIPs(ingress: NonNullable<NonNullable<Service['status']>['loadBalancer']>['ingress']): Record<IPFamily, string[]> {
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
  return out;
}

/**
 * CIDRs, trimmed as kube-proxy trims them, split by family (MapCIDRsByIPFamily) and written
 * canonically ("10.0.0.0/8"). As in kube-proxy, ranges only of the other family leave this family
 * without a firewall.
 */
function sourceRanges(list: string[] | undefined): Record<IPFamily, string[]> {
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
  return out;
}
