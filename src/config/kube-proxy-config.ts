// kube-proxy's configuration file: KubeProxyConfiguration, kubeproxy.config.k8s.io/v1alpha1, as
// `kube-proxy --config` reads it (pkg/proxy/apis/config/v1alpha1) and as kubeadm writes it into the
// kube-proxy ConfigMap's config.conf. Decoding is strict: an unknown field, a field given twice, a
// field of the wrong type or a value kube-proxy would reject is an error naming the field's path.
// kube-proxy (cmd/kube-proxy/app/options.go, loadConfig) decodes strictly first and, when only
// strictness failed (an unknown or a repeated field), decodes again leniently and logs the strict
// error: a file kept from an older release still loads. The proxy does the same (the `strictErrors`
// argument of parseKubeProxyConfig); a wrong type or value stays an error either way. Zero values ("", 0s, null, 0) mean "the default", as
// kube-proxy's SetDefaults_KubeProxyConfiguration treats them, so kubeadm's file (which spells out
// every field with its zero value) decodes to kube-proxy's defaults for nftables mode.
//
// The settings of other modes (iptables, ipvs, winkernel blocks) and of things nftlink does not do
// (portRange, profiling, client rate limits) are checked for shape and otherwise ignored, as
// kube-proxy in nftables mode ignores the other modes'. bindAddress is used as kube-proxy uses it: a specific address is the
// node's primary IP (node-ips.ts).

import { parseIPv4, parseIPv6, parsePrefix } from '../nft/index.js';
import type { ConntrackConfig } from '../proxy/conntrack/sysctls.js';
import { formatGoDuration, parseGoDuration } from './go-duration.js';
import { yaml } from '../on-demand.js';

export const KUBE_PROXY_CONFIG_API_VERSION = 'kubeproxy.config.k8s.io/v1alpha1';
export const KUBE_PROXY_CONFIG_KIND = 'KubeProxyConfiguration';

export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';

/** A decoded KubeProxyConfiguration with every default applied: what the proxy runs with. */
export interface KubeProxyConfig {
  /** Always nftables: the only mode nftlink implements. */
  mode: 'nftables';
  /** Pod CIDRs (clusterCIDR, comma-separated in the file); used when detectLocalMode is ClusterCIDR. */
  clusterCIDRs: string[];
  /**
   * ClusterCIDR: sources in clusterCIDRs are local; NodeCIDR: in the Node object's spec.podCIDRs;
   * BridgeInterface: packets that came in on detectLocal.bridgeInterface; InterfaceNamePrefix: on
   * an interface whose name starts with detectLocal.interfaceNamePrefix.
   */
  detectLocalMode: DetectLocalMode;
  detectLocal: { bridgeInterface: string; interfaceNamePrefix: string };
  /** CIDRs, "primary" (not with CIDRs) and/or "localhost"; empty means primary (nftables mode's default). */
  nodePortAddresses: string[];
  /** host:port of the /healthz and /livez server. In a file '' means the default; a '' flag disables it (as kube-proxy). */
  healthzBindAddress: string;
  /** host:port of the /metrics server; '' as for healthzBindAddress. */
  metricsBindAddress: string;
  /** The node name to use instead of the hostname ('' = the hostname). */
  hostnameOverride: string;
  /** An IP address; a specific one (not 0.0.0.0 or ::) is the node's primary IP. */
  bindAddress: string;
  /** A health or metrics server that cannot bind its port ends the proxy (default: retried). */
  bindAddressHardFail: boolean;
  /** Written to /proc/self/oom_score_adj at start-up (-1000..1000), as kube-proxy does. */
  oomScoreAdj: number;
  clientConnection: {
    /** Path of a kubeconfig file ('' = in-cluster configuration). */
    kubeconfig: string;
    acceptContentTypes: string;
    contentType: string;
    qps: number;
    burst: number;
  };
  nftables: {
    syncPeriodMs: number;
    minSyncPeriodMs: number;
    masqueradeAll: boolean;
    masqueradeBit: number;
  };
  /** Parsed and kept; applying them (sysctls) is not this module's business. 0 means "leave as is". */
  conntrack: ConntrackConfig;
  featureGates: Record<string, boolean>;
  /** How often informers resync (kube-proxy's configSyncPeriod). */
  configSyncPeriodMs: number;
  /** logging.verbosity: the -v level. */
  logVerbosity: number;
}

export class KubeProxyConfigError extends Error {}

/** kube-proxy's ports (pkg/cluster/ports): appended to a bind address that has none. */
const HEALTHZ_PORT = 10256;
const METRICS_PORT = 10249;

/** kube-proxy's defaults for nftables mode (v1alpha1 SetDefaults_KubeProxyConfiguration). */
export function defaultKubeProxyConfig(): KubeProxyConfig {
  return {
    mode: 'nftables',
    clusterCIDRs: [],
    detectLocalMode: 'ClusterCIDR',
    detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
    nodePortAddresses: [],
    healthzBindAddress: `0.0.0.0:${HEALTHZ_PORT}`,
    metricsBindAddress: `127.0.0.1:${METRICS_PORT}`,
    hostnameOverride: '',
    bindAddress: '0.0.0.0',
    bindAddressHardFail: false,
    oomScoreAdj: -999,
    clientConnection: { kubeconfig: '', acceptContentTypes: '', contentType: 'application/vnd.kubernetes.protobuf', qps: 5, burst: 10 },
    nftables: { syncPeriodMs: 30_000, minSyncPeriodMs: 1_000, masqueradeAll: false, masqueradeBit: 14 },
    conntrack: {
      maxPerCore: 32 * 1024,
      min: 128 * 1024,
      tcpEstablishedTimeoutMs: 24 * 3_600_000,
      tcpCloseWaitTimeoutMs: 3_600_000,
      tcpBeLiberal: false,
      udpTimeoutMs: 0,
      udpStreamTimeoutMs: 0,
    },
    featureGates: {},
    configSyncPeriodMs: 15 * 60_000,
    logVerbosity: 0,
  };
}

// ---- the schema: every field v1alpha1 has, with its type -------------------------------------

type FieldType = 'string' | 'bool' | 'int' | 'number' | 'duration' | 'stringList' | 'boolMap' | 'any' | Schema;
interface Schema {
  [field: string]: FieldType;
}

const LOGGING_SCHEMA: Schema = {
  format: 'string',
  flushFrequency: 'any', // a duration string or a number of nanoseconds, as component-base accepts
  verbosity: 'int',
  vmodule: 'any',
  options: 'any',
};

const SCHEMA: Schema = {
  apiVersion: 'string',
  kind: 'string',
  featureGates: 'boolMap',
  clientConnection: { kubeconfig: 'string', acceptContentTypes: 'string', contentType: 'string', qps: 'number', burst: 'int' },
  logging: LOGGING_SCHEMA,
  hostnameOverride: 'string',
  bindAddress: 'string',
  healthzBindAddress: 'string',
  metricsBindAddress: 'string',
  bindAddressHardFail: 'bool',
  enableProfiling: 'bool',
  showHiddenMetricsForVersion: 'string',
  mode: 'string',
  iptables: { masqueradeBit: 'int', masqueradeAll: 'bool', localhostNodePorts: 'bool', syncPeriod: 'duration', minSyncPeriod: 'duration' },
  ipvs: {
    syncPeriod: 'duration',
    minSyncPeriod: 'duration',
    scheduler: 'string',
    excludeCIDRs: 'stringList',
    strictARP: 'bool',
    tcpTimeout: 'duration',
    tcpFinTimeout: 'duration',
    udpTimeout: 'duration',
  },
  nftables: { masqueradeBit: 'int', masqueradeAll: 'bool', syncPeriod: 'duration', minSyncPeriod: 'duration' },
  winkernel: { networkName: 'string', sourceVip: 'string', enableDSR: 'bool', rootHnsEndpointName: 'string', forwardHealthCheckVip: 'bool' },
  detectLocalMode: 'string',
  detectLocal: { bridgeInterface: 'string', interfaceNamePrefix: 'string' },
  clusterCIDR: 'string',
  nodePortAddresses: 'stringList',
  oomScoreAdj: 'int',
  conntrack: {
    maxPerCore: 'int',
    min: 'int',
    tcpEstablishedTimeout: 'duration',
    tcpCloseWaitTimeout: 'duration',
    tcpBeLiberal: 'bool',
    udpTimeout: 'duration',
    udpStreamTimeout: 'duration',
  },
  configSyncPeriod: 'duration',
  portRange: 'string',
  windowsRunAsService: 'bool',
};

/** A checked document: every present, non-null field, by dotted path, with its JS value. */
type Fields = Map<string, unknown>;

function fail(path: string, reason: string): never {
  throw new KubeProxyConfigError(`${path}: ${reason}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** Where strict decoding errors go when decoding falls back to lenient (undefined: they are thrown). */
type StrictErrors = string[] | undefined;

function check(value: unknown, type: FieldType, path: string, out: Fields, strictErrors: StrictErrors): void {
  // null is Go's nil pointer / empty value: the field is unset and gets its default.
  if (value === null || value === undefined) return;
  if (typeof type === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) fail(path, `must be a mapping, not ${describe(value)}`);
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childType = type[key];
      const childPath = path ? `${path}.${key}` : key;
      if (childType === undefined) {
        if (!strictErrors) fail(childPath, 'unknown field');
        strictErrors.push(`${childPath}: unknown field`);
        continue;
      }
      check(child, childType, childPath, out, strictErrors);
    }
    return;
  }
  switch (type) {
    case 'string':
      if (typeof value !== 'string') fail(path, `must be a string, not ${describe(value)}`);
      break;
    case 'bool':
      if (typeof value !== 'boolean') fail(path, `must be true or false, not ${describe(value)}`);
      break;
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) fail(path, `must be an integer, not ${describe(value)}`);
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, `must be a number, not ${describe(value)}`);
      break;
    case 'duration': {
      if (typeof value !== 'string') fail(path, `must be a duration string like "30s", not ${describe(value)}`);
      const d = parseGoDuration(value);
      if ('error' in d) fail(path, d.error);
      out.set(path, d.ms);
      return;
    }
    case 'stringList':
      if (!Array.isArray(value)) fail(path, `must be a list of strings, not ${describe(value)}`);
      value.forEach((item, i) => {
        if (typeof item !== 'string') fail(`${path}[${i}]`, `must be a string, not ${describe(item)}`);
      });
      break;
    case 'boolMap':
      if (typeof value !== 'object' || Array.isArray(value)) fail(path, `must be a mapping of names to true/false, not ${describe(value)}`);
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        if (typeof v !== 'boolean') fail(`${path}.${key}`, `must be true or false, not ${describe(v)}`);
      }
      break;
    case 'any':
      break;
  }
  out.set(path, value);
}

/** Parses YAML (or JSON) text into a plain value; YAML errors name the position. */
function parseYaml(text: string, strictErrors: StrictErrors): unknown {
  const parse = (uniqueKeys: boolean) => yaml().parseDocument(text, { uniqueKeys, prettyErrors: false });
  const yamlError = (d: ReturnType<typeof parse>): string | undefined => d.errors[0] && `not valid YAML: ${d.errors[0].message.split('\n')[0]}`;
  // uniqueKeys: a field given twice is an error, as in kube-proxy's strict decoding; its lenient
  // decoding keeps the last one.
  let doc = parse(true);
  const strict = yamlError(doc);
  if (strict && strictErrors && doc.errors.every((e) => e.code === 'DUPLICATE_KEY')) {
    strictErrors.push(strict);
    doc = parse(false);
  }
  const error = yamlError(doc);
  if (error) throw new KubeProxyConfigError(error);
  return doc.toJS({ maxAliasCount: 100 });
}

/** Appends kube-proxy's port to a bind address that has none (proxyutil.AppendPortIfNeeded). */
export function withPort(address: string, port: number, path: string): string {
  const ipv6 = address.startsWith('[') || (address.match(/:/g) ?? []).length > 1;
  if (ipv6) {
    if (address.startsWith('[')) {
      const m = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(address);
      if (!m) fail(path, `"${address}" is not an address or host:port`);
      return m[2] !== undefined ? checkPort(address, m[2], path) : `${address}:${port}`;
    }
    return `[${address}]:${port}`;
  }
  const m = /^([^:]*)(?::(\d*))?$/.exec(address);
  if (!m) fail(path, `"${address}" is not an address or host:port`);
  if (m[2] === undefined) return `${address}:${port}`;
  return checkPort(address, m[2], path);
}

function checkPort(address: string, port: string, path: string): string {
  const n = Number(port);
  if (port === '' || !Number.isInteger(n) || n < 0 || n > 65535) fail(path, `"${address}": port must be 0..65535`);
  return address;
}

function looksLikeCidr(text: string): boolean {
  return text.includes('/') && parsePrefix(text, text.includes(':') ? 6 : 4) !== null;
}

/**
 * Decodes a KubeProxyConfiguration. `origin` (a file name) prefixes every error message.
 * Throws KubeProxyConfigError naming the field and the reason. With `strictErrors`, decoding is
 * kube-proxy's: unknown fields are skipped and a repeated field keeps its last value, each noted
 * there (prefixed with `origin`) instead of thrown.
 */
export function parseKubeProxyConfig(text: string, origin?: string, strictErrors?: string[]): KubeProxyConfig {
  const found: StrictErrors = strictErrors ? [] : undefined;
  try {
    const cfg = decode(parseYaml(text, found), found);
    strictErrors?.push(...found!.map((e) => (origin ? `${origin}: ${e}` : e)));
    return cfg;
  } catch (err) {
    if (err instanceof KubeProxyConfigError && origin) throw new KubeProxyConfigError(`${origin}: ${err.message}`);
    throw err;
  }
}

/** Decodes an already-parsed document (a plain object), with the same checks as parseKubeProxyConfig. */
export function decodeKubeProxyConfig(value: unknown): KubeProxyConfig {
  return decode(value, undefined);
}

function decode(value: unknown, strictErrors: StrictErrors): KubeProxyConfig {
  if (value === null || value === undefined) fail('(document)', 'empty: expected a KubeProxyConfiguration');
  const f: Fields = new Map();
  check(value, SCHEMA, '', f, strictErrors);
  if (f.get('kind') !== KUBE_PROXY_CONFIG_KIND) fail('kind', `must be ${KUBE_PROXY_CONFIG_KIND}, not ${JSON.stringify(f.get('kind') ?? '')}`);
  if (f.get('apiVersion') !== KUBE_PROXY_CONFIG_API_VERSION) {
    fail('apiVersion', `must be ${KUBE_PROXY_CONFIG_API_VERSION}, not ${JSON.stringify(f.get('apiVersion') ?? '')}`);
  }

  const cfg = defaultKubeProxyConfig();
  const str = (path: string): string => (f.get(path) as string | undefined) ?? '';
  // A zero value keeps the default, as kube-proxy's defaulting does for these fields.
  const nonZero = <T>(path: string): T | undefined => {
    const v = f.get(path);
    return v === '' || v === 0 ? undefined : (v as T | undefined);
  };

  const mode = str('mode');
  if (mode !== '' && mode !== 'nftables') {
    fail('mode', `"${mode}" is not supported: nftlink implements only the nftables mode (use "nftables", or leave mode empty)`);
  }

  cfg.hostnameOverride = str('hostnameOverride').trim().toLowerCase();
  cfg.clusterCIDRs = str('clusterCIDR')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  cfg.clusterCIDRs.forEach((c) => {
    if (!looksLikeCidr(c)) fail('clusterCIDR', `"${c}" is not a CIDR`);
  });
  if (cfg.clusterCIDRs.length > 2) fail('clusterCIDR', 'at most two CIDRs (one per IP family)');

  const detect = str('detectLocalMode');
  if (detect === 'ClusterCIDR' || detect === 'NodeCIDR' || detect === 'BridgeInterface' || detect === 'InterfaceNamePrefix') cfg.detectLocalMode = detect;
  else if (detect !== '') fail('detectLocalMode', `"${detect}" is not a mode (ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix)`);
  cfg.detectLocal = { bridgeInterface: str('detectLocal.bridgeInterface'), interfaceNamePrefix: str('detectLocal.interfaceNamePrefix') };
  // As kube-proxy's validation: the mode's interface is required, and an interface name has at
  // most 15 bytes (IFNAMSIZ); a prefix can be no longer.
  const needInterface = (field: 'bridgeInterface' | 'interfaceNamePrefix'): void => {
    const v = cfg.detectLocal[field];
    if (v === '') fail(`detectLocal.${field}`, `required with detectLocalMode ${cfg.detectLocalMode}`);
    if (Buffer.byteLength(v) > 15 || /[\s/:\0]/.test(v)) fail(`detectLocal.${field}`, `"${v}" is not an interface name (at most 15 bytes, no space, '/' or ':')`);
  };
  if (cfg.detectLocalMode === 'BridgeInterface') needInterface('bridgeInterface');
  if (cfg.detectLocalMode === 'InterfaceNamePrefix') needInterface('interfaceNamePrefix');

  const npa = (f.get('nodePortAddresses') as string[] | undefined) ?? [];
  // "localhost" is nftlink's (NodePorts on loopback, served in userspace); kube-proxy's nftables
  // mode has no localhost NodePorts and would refuse it.
  npa.forEach((entry, i) => {
    if (entry !== 'primary' && entry !== 'localhost' && !looksLikeCidr(entry)) {
      fail(`nodePortAddresses[${i}]`, `"${entry}" is not a CIDR, "primary" or "localhost"`);
    }
  });
  // kube-proxy refuses "primary" mixed with CIDRs (validation.go).
  if (npa.includes('primary') && npa.some((e) => e !== 'primary' && e !== 'localhost')) fail('nodePortAddresses', '"primary" cannot be combined with CIDRs');
  cfg.nodePortAddresses = npa;

  const bind = nonZero<string>('bindAddress');
  if (bind !== undefined) {
    if (!parseIPv4(bind) && !parseIPv6(bind)) fail('bindAddress', `"${bind}" is not an IP address`);
    cfg.bindAddress = bind;
  }

  cfg.bindAddressHardFail = (f.get('bindAddressHardFail') as boolean | undefined) ?? false;
  // oomScoreAdj is a pointer: null is the default (-999), 0 is 0.
  const oom = f.get('oomScoreAdj') as number | undefined;
  if (oom !== undefined) {
    if (oom < -1000 || oom > 1000) fail('oomScoreAdj', `${oom} is not in -1000..1000`);
    cfg.oomScoreAdj = oom;
  }

  const healthz = nonZero<string>('healthzBindAddress');
  if (healthz !== undefined) cfg.healthzBindAddress = withPort(healthz, HEALTHZ_PORT, 'healthzBindAddress');
  const metrics = nonZero<string>('metricsBindAddress');
  if (metrics !== undefined) cfg.metricsBindAddress = withPort(metrics, METRICS_PORT, 'metricsBindAddress');

  cfg.clientConnection.kubeconfig = str('clientConnection.kubeconfig');
  cfg.clientConnection.acceptContentTypes = str('clientConnection.acceptContentTypes');
  cfg.clientConnection.contentType = nonZero<string>('clientConnection.contentType') ?? cfg.clientConnection.contentType;
  cfg.clientConnection.qps = nonZero<number>('clientConnection.qps') ?? cfg.clientConnection.qps;
  cfg.clientConnection.burst = nonZero<number>('clientConnection.burst') ?? cfg.clientConnection.burst;

  cfg.nftables.syncPeriodMs = nonZero<number>('nftables.syncPeriod') ?? cfg.nftables.syncPeriodMs;
  cfg.nftables.minSyncPeriodMs = nonZero<number>('nftables.minSyncPeriod') ?? cfg.nftables.minSyncPeriodMs;
  if (cfg.nftables.syncPeriodMs <= 0) fail('nftables.syncPeriod', 'must be greater than 0');
  if (cfg.nftables.minSyncPeriodMs < 0) fail('nftables.minSyncPeriod', 'must be 0 or more');
  if (cfg.nftables.minSyncPeriodMs > cfg.nftables.syncPeriodMs) fail('nftables.minSyncPeriod', 'must not be longer than nftables.syncPeriod');
  cfg.nftables.masqueradeAll = (f.get('nftables.masqueradeAll') as boolean | undefined) ?? false;
  // masqueradeBit is a pointer in v1alpha1: null is the default, 0 is bit 0.
  const bit = f.get('nftables.masqueradeBit') as number | undefined;
  if (bit !== undefined) {
    if (bit < 0 || bit > 31) fail('nftables.masqueradeBit', `${bit} is not in 0..31`);
    cfg.nftables.masqueradeBit = bit;
  }
  // kube-proxy validates the iptables block's bit in every mode (and uses it in none but iptables and ipvs).
  const iptablesBit = f.get('iptables.masqueradeBit') as number | undefined;
  if (iptablesBit !== undefined && (iptablesBit < 0 || iptablesBit > 31)) fail('iptables.masqueradeBit', `${iptablesBit} is not in 0..31`);

  // conntrack maxPerCore and min are pointers too: 0 is "leave the kernel's value", null the default.
  for (const key of ['maxPerCore', 'min'] as const) {
    const v = f.get(`conntrack.${key}`) as number | undefined;
    if (v === undefined) continue;
    if (v < 0) fail(`conntrack.${key}`, 'must be 0 or more');
    cfg.conntrack[key] = v;
  }
  const conntrackDurations = [
    ['tcpEstablishedTimeout', 'tcpEstablishedTimeoutMs'],
    ['tcpCloseWaitTimeout', 'tcpCloseWaitTimeoutMs'],
    ['udpTimeout', 'udpTimeoutMs'],
    ['udpStreamTimeout', 'udpStreamTimeoutMs'],
  ] as const;
  for (const [field, key] of conntrackDurations) {
    const v = f.get(`conntrack.${field}`) as number | undefined;
    if (v === undefined) continue;
    if (v < 0) fail(`conntrack.${field}`, 'must be 0 or more');
    cfg.conntrack[key] = v;
  }
  cfg.conntrack.tcpBeLiberal = (f.get('conntrack.tcpBeLiberal') as boolean | undefined) ?? false;

  cfg.featureGates = { ...((f.get('featureGates') as Record<string, boolean> | undefined) ?? {}) };
  cfg.configSyncPeriodMs = nonZero<number>('configSyncPeriod') ?? cfg.configSyncPeriodMs;
  if (cfg.configSyncPeriodMs < 0) fail('configSyncPeriod', 'must be 0 or more');
  const verbosity = f.get('logging.verbosity') as number | undefined;
  if (verbosity !== undefined && verbosity < 0) fail('logging.verbosity', 'must be 0 or more');
  cfg.logVerbosity = verbosity ?? 0;
  return cfg;
}

/**
 * A complete KubeProxyConfiguration for `--write-config-to`: every field nftlink uses, with its
 * value, in the shape kube-proxy reads (so the same file configures either).
 */
export function writeConfig(cfg: KubeProxyConfig): string {
  const doc = {
    apiVersion: KUBE_PROXY_CONFIG_API_VERSION,
    kind: KUBE_PROXY_CONFIG_KIND,
    clientConnection: {
      acceptContentTypes: cfg.clientConnection.acceptContentTypes,
      burst: cfg.clientConnection.burst,
      contentType: cfg.clientConnection.contentType,
      kubeconfig: cfg.clientConnection.kubeconfig,
      qps: cfg.clientConnection.qps,
    },
    clusterCIDR: cfg.clusterCIDRs.join(','),
    configSyncPeriod: formatGoDuration(cfg.configSyncPeriodMs),
    conntrack: {
      maxPerCore: cfg.conntrack.maxPerCore,
      min: cfg.conntrack.min,
      tcpBeLiberal: cfg.conntrack.tcpBeLiberal,
      tcpCloseWaitTimeout: formatGoDuration(cfg.conntrack.tcpCloseWaitTimeoutMs),
      tcpEstablishedTimeout: formatGoDuration(cfg.conntrack.tcpEstablishedTimeoutMs),
      udpStreamTimeout: formatGoDuration(cfg.conntrack.udpStreamTimeoutMs),
      udpTimeout: formatGoDuration(cfg.conntrack.udpTimeoutMs),
    },
    detectLocal: cfg.detectLocal,
    detectLocalMode: cfg.detectLocalMode,
    featureGates: cfg.featureGates,
    bindAddress: cfg.bindAddress,
    bindAddressHardFail: cfg.bindAddressHardFail,
    healthzBindAddress: cfg.healthzBindAddress,
    hostnameOverride: cfg.hostnameOverride,
    logging: { verbosity: cfg.logVerbosity },
    metricsBindAddress: cfg.metricsBindAddress,
    mode: cfg.mode,
    nftables: {
      masqueradeAll: cfg.nftables.masqueradeAll,
      masqueradeBit: cfg.nftables.masqueradeBit,
      minSyncPeriod: formatGoDuration(cfg.nftables.minSyncPeriodMs),
      syncPeriod: formatGoDuration(cfg.nftables.syncPeriodMs),
    },
    nodePortAddresses: cfg.nodePortAddresses,
    oomScoreAdj: cfg.oomScoreAdj,
  };
  return yaml().stringify(doc, { lineWidth: 0 });
}
