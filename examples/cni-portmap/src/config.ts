// The network configuration on stdin, checked field by field: what the runtime put in
// runtimeConfig.portMappings (the `portMappings` capability), the previous plugin's result, and
// this plugin's options. Every refusal names the field and what it takes.

import { isIP } from 'node:net';
import { formatIPv4, formatIPv6, parsePrefix } from 'nftlink';
import { CNI_ERROR, CniError, SUPPORTED_VERSIONS, type CniCommand } from './cni.js';

export type Protocol = 'tcp' | 'udp' | 'sctp';

export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol: Protocol;
  /** A host address the mapping is limited to; absent for every local address. */
  hostIP?: string;
}

/** One of the container's addresses, from prevResult. */
export interface ContainerAddress {
  family: 'ip' | 'ip6';
  address: string;
  /** The subnet the address is in ("198.18.10.0/24"), whose other members reach it through the host port. */
  subnet: string;
}

export interface PortMapConfig {
  cniVersion: string;
  name: string;
  mappings: PortMapping[];
  /** Masquerade hairpin and localhost connections (upstream's `snat`, default true). */
  snat: boolean;
  /** The previous plugin's result, passed on unchanged by ADD. */
  prevResult?: Record<string, unknown>;
  /** The first IPv4 and the first IPv6 address of the container's interface. */
  addresses: ContainerAddress[];
}

/**
 * Options of the upstream portmap plugin that this one does not implement: refused with the
 * spec's "unsupported field" rather than ignored, so that a configuration never means less than it says.
 */
const UNSUPPORTED = ['conditionsV4', 'conditionsV6', 'externalSetMarkChain', 'markMasqBit', 'masqAll'];

const invalid = (msg: string): CniError => new CniError(CNI_ERROR.invalidConfig, msg);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The cniVersion, read first so that even a refusal of the rest can be written in it. */
export function peekVersion(stdin: string): string | undefined {
  try {
    const v = (JSON.parse(stdin) as { cniVersion?: unknown }).cniVersion;
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export function decode(stdin: string): Record<string, unknown> {
  let conf: unknown;
  try {
    conf = JSON.parse(stdin);
  } catch (err) {
    throw new CniError(CNI_ERROR.decodeFailure, 'the network configuration on stdin is not JSON', (err as Error).message);
  }
  if (!isObject(conf)) throw new CniError(CNI_ERROR.decodeFailure, 'the network configuration on stdin is not a JSON object');
  return conf;
}

function checkVersion(conf: Record<string, unknown>, command: CniCommand): string {
  const v = conf.cniVersion;
  if (typeof v !== 'string' || v === '') throw invalid('cniVersion is missing: it takes a version string such as "1.0.0"');
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(v)) {
    throw new CniError(CNI_ERROR.incompatibleVersion, `cniVersion "${v}" is not supported: this plugin speaks ${SUPPORTED_VERSIONS.join(', ')}`);
  }
  // CHECK came with 0.4.0.
  if (command === 'CHECK' && (v === '0.3.0' || v === '0.3.1')) {
    throw new CniError(CNI_ERROR.incompatibleVersion, `cniVersion "${v}" has no CHECK: it came with 0.4.0`);
  }
  return v;
}

export function parseConfig(conf: Record<string, unknown>, command: CniCommand, ifname: string): PortMapConfig {
  const cniVersion = checkVersion(conf, command);
  if (typeof conf.name !== 'string' || conf.name === '') throw invalid('name is missing: it takes the network\'s name');
  for (const field of UNSUPPORTED) {
    if (field in conf) throw new CniError(CNI_ERROR.unsupportedField, `${field} is not supported by nftlink-portmap`);
  }
  if (conf.backend !== undefined && conf.backend !== 'nftables') {
    throw new CniError(CNI_ERROR.unsupportedField, `backend "${String(conf.backend)}" is not supported: nftlink-portmap writes nftables only`);
  }
  if (conf.snat !== undefined && typeof conf.snat !== 'boolean') throw invalid(`snat takes true or false, not ${JSON.stringify(conf.snat)}`);

  const runtime = conf.runtimeConfig;
  if (runtime !== undefined && !isObject(runtime)) throw invalid('runtimeConfig takes an object');
  const list = runtime?.portMappings ?? [];
  if (!Array.isArray(list)) throw invalid('runtimeConfig.portMappings takes a list of mappings');
  const mappings = list.map((m, i) => parseMapping(m, `runtimeConfig.portMappings[${i}]`));

  let prevResult: Record<string, unknown> | undefined;
  if (conf.prevResult !== undefined) {
    if (!isObject(conf.prevResult)) throw invalid('prevResult takes the previous plugin\'s result object');
    prevResult = conf.prevResult;
  }
  if (!prevResult && command !== 'DEL') {
    throw invalid('prevResult is missing: nftlink-portmap is a chained plugin and runs after the plugin that gives the container its addresses');
  }
  return {
    cniVersion,
    name: conf.name,
    mappings,
    snat: conf.snat ?? true,
    ...(prevResult ? { prevResult } : {}),
    addresses: prevResult ? containerAddresses(prevResult, ifname) : [],
  };
}

const PROTOCOLS: readonly string[] = ['tcp', 'udp', 'sctp'];

function port(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
    throw invalid(`${where} takes a port number from 1 to 65535, not ${JSON.stringify(v)}`);
  }
  return v;
}

function parseMapping(m: unknown, where: string): PortMapping {
  if (!isObject(m)) throw invalid(`${where} takes an object { hostPort, containerPort, protocol, hostIP }`);
  const protocol = m.protocol === undefined || m.protocol === '' ? 'tcp' : m.protocol;
  if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol.toLowerCase())) {
    throw invalid(`${where}.protocol takes tcp, udp or sctp, not ${JSON.stringify(m.protocol)}`);
  }
  const out: PortMapping = {
    hostPort: port(m.hostPort, `${where}.hostPort`),
    containerPort: port(m.containerPort, `${where}.containerPort`),
    protocol: protocol.toLowerCase() as Protocol,
  };
  if (m.hostIP !== undefined && m.hostIP !== '') {
    if (typeof m.hostIP !== 'string' || isIP(m.hostIP) === 0) throw invalid(`${where}.hostIP takes an IPv4 or IPv6 address, not ${JSON.stringify(m.hostIP)}`);
    out.hostIP = m.hostIP;
  }
  return out;
}

/**
 * The container's addresses in the previous result: those on the interface named CNI_IFNAME inside
 * the sandbox (or not tied to an interface), the first of each family, as upstream chooses them.
 */
function containerAddresses(prev: Record<string, unknown>, ifname: string): ContainerAddress[] {
  const ips = prev.ips ?? [];
  const interfaces = prev.interfaces ?? [];
  if (!Array.isArray(ips)) throw invalid('prevResult.ips takes a list');
  if (!Array.isArray(interfaces)) throw invalid('prevResult.interfaces takes a list');
  const out: ContainerAddress[] = [];
  ips.forEach((entry: unknown, i) => {
    const where = `prevResult.ips[${i}]`;
    if (!isObject(entry) || typeof entry.address !== 'string') throw invalid(`${where}.address takes an address with its prefix length ("198.18.10.2/24")`);
    const subnet = subnetOf(entry.address);
    if (!subnet) throw invalid(`${where}.address takes an address with its prefix length ("198.18.10.2/24"), not "${entry.address}"`);
    if (typeof entry.interface === 'number') {
      const iface: unknown = interfaces[entry.interface];
      if (isObject(iface) && (iface.name !== ifname || !iface.sandbox)) return;
    }
    if (!out.some((a) => a.family === subnet.family)) out.push(subnet);
  });
  return out;
}

/** "198.18.10.2/24" -> the address, its family and its subnet ("198.18.10.0/24"). */
function subnetOf(cidr: string): ContainerAddress | undefined {
  const slash = cidr.indexOf('/');
  if (slash < 0) return undefined;
  const address = cidr.slice(0, slash);
  const kind = isIP(address) as 0 | 4 | 6;
  if (kind === 0) return undefined;
  const prefix = parsePrefix(cidr, kind);
  if (!prefix) return undefined;
  const network = kind === 4 ? formatIPv4(prefix.bytes) : formatIPv6(prefix.bytes);
  return { family: kind === 4 ? 'ip' : 'ip6', address, subnet: `${network}/${prefix.length}` };
}
