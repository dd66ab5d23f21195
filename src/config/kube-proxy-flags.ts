// How kube-proxy combines its command line with --config (cmd/kube-proxy/app/options.go,
// Options.Complete), for `nftlink proxy` to behave the same:
//
// - without --config, the flags are the configuration (on kube-proxy's defaults);
// - with --config, the file is the configuration and the flags that have a field in it are
//   ignored, except -v and --hostname-override, which kube-proxy applies over the file
//   (copyLogsFromFlags, processHostnameOverrideFlag). The ignored flags are returned so that the
//   caller can warn about them (kube-proxy ignores them silently, which surprises people).
//
// Every flag kube-proxy has (1.33-1.36) is accepted, so that a DaemonSet's kube-proxy command line
// starts nftlink unchanged. Those of other modes (--ipvs-*, --iptables-masquerade-bit, ...) are
// checked and ignored, as kube-proxy's nftables mode ignores them; so are a few nftlink has no use
// for (client rate limits, profiling): each says why, and the proxy logs it when given.
// --iptables-sync-period and --iptables-min-sync-period set the nftables mode's periods, as in
// kube-proxy; --sync-period, --min-sync-period and --masquerade-bit are nftlink's own spellings
// (kube-proxy has no flag for nftables.masqueradeBit).
//
// Flag values go through the same decoder as the file, so they are checked the same way; errors
// name the flag.

import { decodeKubeProxyConfig, KUBE_PROXY_CONFIG_API_VERSION, KUBE_PROXY_CONFIG_KIND, KubeProxyConfigError, withPort, type KubeProxyConfig } from './kube-proxy-config.js';

/** How a flag's text becomes the field's value. */
type FlagKind = 'string' | 'bool' | 'int' | 'number' | 'duration' | 'list';

interface FlagSpec {
  /** As typed on the command line, without the dashes. */
  readonly flag: string;
  /** The KubeProxyConfiguration field it sets (dotted path). */
  readonly field: string;
  readonly kind: FlagKind;
  /** Why the flag changes nothing in nftlink (logged when it is given); absent: it takes effect. */
  readonly noEffect?: string;
}

const OTHER_MODE = 'a setting of another proxy mode; the nftables mode ignores it, as kube-proxy does';

/** kube-proxy's flags that have a configuration field (and nftlink's own spellings of three). */
export const KUBE_PROXY_FLAGS = {
  kubeconfig: { flag: 'kubeconfig', field: 'clientConnection.kubeconfig', kind: 'string' },
  kubeApiContentType: { flag: 'kube-api-content-type', field: 'clientConnection.contentType', kind: 'string', noEffect: 'nftlink asks the API server for JSON' },
  kubeApiQps: { flag: 'kube-api-qps', field: 'clientConnection.qps', kind: 'number', noEffect: 'nftlink makes a few list and watch requests and does not rate-limit them' },
  kubeApiBurst: { flag: 'kube-api-burst', field: 'clientConnection.burst', kind: 'int', noEffect: 'nftlink makes a few list and watch requests and does not rate-limit them' },
  hostnameOverride: { flag: 'hostname-override', field: 'hostnameOverride', kind: 'string' },
  proxyMode: { flag: 'proxy-mode', field: 'mode', kind: 'string' },
  clusterCIDR: { flag: 'cluster-cidr', field: 'clusterCIDR', kind: 'string' },
  detectLocalMode: { flag: 'detect-local-mode', field: 'detectLocalMode', kind: 'string' },
  podBridgeInterface: { flag: 'pod-bridge-interface', field: 'detectLocal.bridgeInterface', kind: 'string' },
  podInterfaceNamePrefix: { flag: 'pod-interface-name-prefix', field: 'detectLocal.interfaceNamePrefix', kind: 'string' },
  nodePortAddresses: { flag: 'nodeport-addresses', field: 'nodePortAddresses', kind: 'list' },
  masqueradeAll: { flag: 'masquerade-all', field: 'nftables.masqueradeAll', kind: 'bool' },
  masqueradeBit: { flag: 'masquerade-bit', field: 'nftables.masqueradeBit', kind: 'int' },
  syncPeriod: { flag: 'sync-period', field: 'nftables.syncPeriod', kind: 'duration' },
  minSyncPeriod: { flag: 'min-sync-period', field: 'nftables.minSyncPeriod', kind: 'duration' },
  iptablesSyncPeriod: { flag: 'iptables-sync-period', field: 'nftables.syncPeriod', kind: 'duration' },
  iptablesMinSyncPeriod: { flag: 'iptables-min-sync-period', field: 'nftables.minSyncPeriod', kind: 'duration' },
  iptablesMasqueradeBit: { flag: 'iptables-masquerade-bit', field: 'iptables.masqueradeBit', kind: 'int', noEffect: `${OTHER_MODE} (the nftables mode's bit is nftables.masqueradeBit, nftlink's --masquerade-bit)` },
  iptablesLocalhostNodeports: { flag: 'iptables-localhost-nodeports', field: 'iptables.localhostNodePorts', kind: 'bool', noEffect: OTHER_MODE },
  ipvsSyncPeriod: { flag: 'ipvs-sync-period', field: 'ipvs.syncPeriod', kind: 'duration', noEffect: OTHER_MODE },
  ipvsMinSyncPeriod: { flag: 'ipvs-min-sync-period', field: 'ipvs.minSyncPeriod', kind: 'duration', noEffect: OTHER_MODE },
  ipvsScheduler: { flag: 'ipvs-scheduler', field: 'ipvs.scheduler', kind: 'string', noEffect: OTHER_MODE },
  ipvsExcludeCIDRs: { flag: 'ipvs-exclude-cidrs', field: 'ipvs.excludeCIDRs', kind: 'list', noEffect: OTHER_MODE },
  ipvsStrictARP: { flag: 'ipvs-strict-arp', field: 'ipvs.strictARP', kind: 'bool', noEffect: OTHER_MODE },
  ipvsTcpTimeout: { flag: 'ipvs-tcp-timeout', field: 'ipvs.tcpTimeout', kind: 'duration', noEffect: OTHER_MODE },
  ipvsTcpFinTimeout: { flag: 'ipvs-tcpfin-timeout', field: 'ipvs.tcpFinTimeout', kind: 'duration', noEffect: OTHER_MODE },
  ipvsUdpTimeout: { flag: 'ipvs-udp-timeout', field: 'ipvs.udpTimeout', kind: 'duration', noEffect: OTHER_MODE },
  bindAddress: { flag: 'bind-address', field: 'bindAddress', kind: 'string' },
  bindAddressHardFail: { flag: 'bind-address-hard-fail', field: 'bindAddressHardFail', kind: 'bool' },
  healthzBindAddress: { flag: 'healthz-bind-address', field: 'healthzBindAddress', kind: 'string' },
  metricsBindAddress: { flag: 'metrics-bind-address', field: 'metricsBindAddress', kind: 'string' },
  profiling: { flag: 'profiling', field: 'enableProfiling', kind: 'bool', noEffect: 'nftlink serves no /debug/pprof (node --inspect or --cpu-prof profile it)' },
  showHiddenMetricsForVersion: { flag: 'show-hidden-metrics-for-version', field: 'showHiddenMetricsForVersion', kind: 'string', noEffect: 'nftlink hides no deprecated metrics' },
  oomScoreAdj: { flag: 'oom-score-adj', field: 'oomScoreAdj', kind: 'int' },
  conntrackMaxPerCore: { flag: 'conntrack-max-per-core', field: 'conntrack.maxPerCore', kind: 'int' },
  conntrackMin: { flag: 'conntrack-min', field: 'conntrack.min', kind: 'int' },
  conntrackTcpTimeoutEstablished: { flag: 'conntrack-tcp-timeout-established', field: 'conntrack.tcpEstablishedTimeout', kind: 'duration' },
  conntrackTcpTimeoutCloseWait: { flag: 'conntrack-tcp-timeout-close-wait', field: 'conntrack.tcpCloseWaitTimeout', kind: 'duration' },
  conntrackTcpBeLiberal: { flag: 'conntrack-tcp-be-liberal', field: 'conntrack.tcpBeLiberal', kind: 'bool' },
  conntrackUdpTimeout: { flag: 'conntrack-udp-timeout', field: 'conntrack.udpTimeout', kind: 'duration' },
  conntrackUdpTimeoutStream: { flag: 'conntrack-udp-timeout-stream', field: 'conntrack.udpStreamTimeout', kind: 'duration' },
  configSyncPeriod: { flag: 'config-sync-period', field: 'configSyncPeriod', kind: 'duration', noEffect: 'nftlink watches without periodic resyncs (a broken watch relists)' },
  loggingFormat: { flag: 'logging-format', field: 'logging.format', kind: 'string', noEffect: 'nftlink logs JSON lines' },
  logFlushFrequency: { flag: 'log-flush-frequency', field: 'logging.flushFrequency', kind: 'string', noEffect: 'nftlink writes each log line at once' },
  vmodule: { flag: 'vmodule', field: 'logging.vmodule', kind: 'string', noEffect: 'nftlink has one verbosity, -v' },
  v: { flag: 'v', field: 'logging.verbosity', kind: 'int' },
} as const satisfies Record<string, FlagSpec>;

type Flags = typeof KUBE_PROXY_FLAGS;

/** The flags that have a KubeProxyConfiguration field, as parsed (strings; booleans for switches). */
export type KubeProxyFlags = { [K in keyof Flags]?: Flags[K]['kind'] extends 'bool' ? boolean : string };

/** The same flags as node:util parseArgs options. */
export type KubeProxyParseOptions = { [K in keyof Flags as Flags[K]['flag']]: { type: Flags[K]['kind'] extends 'bool' ? 'boolean' : 'string' } };

export const KUBE_PROXY_PARSE_OPTIONS = Object.fromEntries(
  Object.values(KUBE_PROXY_FLAGS).map((s: FlagSpec) => [s.flag, { type: s.kind === 'bool' ? 'boolean' : 'string' }]),
) as KubeProxyParseOptions;

const FLAG_KEYS = Object.keys(KUBE_PROXY_FLAGS) as (keyof Flags)[];
const spec = (k: keyof Flags): FlagSpec => KUBE_PROXY_FLAGS[k];
const dashed = (k: keyof Flags): string => (k === 'v' ? '-v' : `--${spec(k).flag}`);

/** Applied over a --config file, as kube-proxy does. */
const OVERRIDE_FILE: readonly (keyof Flags)[] = ['hostnameOverride', 'v'];

/** kube-proxy's deprecated --healthz-port and --metrics-port (no configuration field). */
export interface DeprecatedPorts {
  healthz?: string;
  metrics?: string;
}

export interface ResolvedConfig {
  config: KubeProxyConfig;
  /** Flags given together with --config that the file overrides (for a warning). */
  ignoredFlags: string[];
  /** Flags given that change nothing in nftlink, with the reason (for a log line each). */
  noEffectFlags: { flag: string; reason: string }[];
}

function integer(text: string, flag: string): number {
  if (!/^-?\d+$/.test(text.trim())) throw new KubeProxyConfigError(`${flag}: "${text}" is not an integer`);
  return Number(text);
}

function decimal(text: string, flag: string): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n)) throw new KubeProxyConfigError(`${flag}: "${text}" is not a number`);
  return n;
}

function port(text: string, flag: string): number {
  const n = integer(text, flag);
  if (n < 0 || n > 65535) throw new KubeProxyConfigError(`${flag}: ${n} is not a port (0..65535)`);
  return n;
}

/**
 * kube-proxy's addressFromDeprecatedFlags: port 0 turns the server off; another port is appended
 * to a bind address given without one (the default address has its port already).
 */
function withDeprecatedPort(address: string | undefined, portText: string | undefined, flag: string, addressFlag: string): string | undefined {
  if (portText === undefined) return address;
  const p = port(portText, flag);
  if (p === 0) return '';
  if (address === undefined || address === '') return address;
  return withPort(address, p, addressFlag);
}

/** The document the flags describe (only the fields of flags that were given). */
function documentFromFlags(flags: KubeProxyFlags, keys: readonly (keyof Flags)[]): Record<string, unknown> {
  const doc: Record<string, unknown> = { apiVersion: KUBE_PROXY_CONFIG_API_VERSION, kind: KUBE_PROXY_CONFIG_KIND };
  const setBy = new Map<string, { flag: string; value: unknown }>();
  const set = (path: string, value: unknown, flag: string): void => {
    const earlier = setBy.get(path);
    if (earlier && JSON.stringify(earlier.value) !== JSON.stringify(value)) {
      throw new KubeProxyConfigError(`${earlier.flag} and ${flag} both set ${path}, to different values`);
    }
    setBy.set(path, { flag, value });
    const parts = path.split('.');
    let at = doc;
    for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
    at[parts[parts.length - 1]!] = value;
  };
  for (const key of keys) {
    const value = flags[key];
    if (value === undefined) continue;
    const { field, kind } = spec(key);
    const flag = dashed(key);
    const text = String(value);
    if (kind === 'list') set(field, text.split(',').map((x) => x.trim()).filter(Boolean), flag);
    else if (kind === 'int') set(field, integer(text, flag), flag);
    else if (kind === 'number') set(field, decimal(text, flag), flag);
    else set(field, value, flag);
  }
  return doc;
}

/** Decodes, naming the flag instead of the field in errors. */
function decodeFlags(doc: Record<string, unknown>, given: readonly (keyof Flags)[]): KubeProxyConfig {
  try {
    return decodeKubeProxyConfig(doc);
  } catch (err) {
    if (!(err instanceof KubeProxyConfigError)) throw err;
    // The flag given for that field, else the first flag that sets it (a required one not given).
    for (const key of [...given, ...FLAG_KEYS]) {
      const { field } = spec(key);
      if (err.message.startsWith(`${field}: `) || err.message.startsWith(`${field}[`)) {
        throw new KubeProxyConfigError(`${dashed(key)}: ${err.message.slice(err.message.indexOf(': ') + 2)}`);
      }
    }
    throw err;
  }
}

/**
 * The configuration to run with: the file's when given (with -v and --hostname-override over it),
 * else the flags' on kube-proxy's defaults. An empty --healthz-bind-address or
 * --metrics-bind-address disables that server, as in kube-proxy; so do the deprecated
 * --healthz-port 0 and --metrics-port 0 without --config.
 */
export function resolveKubeProxyConfig(flags: KubeProxyFlags, file?: KubeProxyConfig, deprecated: DeprecatedPorts = {}): ResolvedConfig {
  const given = FLAG_KEYS.filter((k) => flags[k] !== undefined);
  if (!file) {
    const noEffectFlags = given.flatMap((k) => (spec(k).noEffect ? [{ flag: dashed(k), reason: spec(k).noEffect! }] : []));
    const healthz = withDeprecatedPort(flags.healthzBindAddress, deprecated.healthz, '--healthz-port', '--healthz-bind-address');
    const metrics = withDeprecatedPort(flags.metricsBindAddress, deprecated.metrics, '--metrics-port', '--metrics-bind-address');
    const withPorts: KubeProxyFlags = { ...flags, ...(healthz !== undefined ? { healthzBindAddress: healthz } : {}), ...(metrics !== undefined ? { metricsBindAddress: metrics } : {}) };
    const keys = FLAG_KEYS.filter((k) => withPorts[k] !== undefined);
    const config = decodeFlags(documentFromFlags(withPorts, keys), keys);
    if (withPorts.healthzBindAddress === '') config.healthzBindAddress = '';
    if (withPorts.metricsBindAddress === '') config.metricsBindAddress = '';
    return { config, ignoredFlags: [], noEffectFlags };
  }
  const config: KubeProxyConfig = structuredClone(file);
  const overrides = decodeFlags(documentFromFlags(flags, OVERRIDE_FILE), OVERRIDE_FILE);
  if (flags.hostnameOverride !== undefined && flags.hostnameOverride !== '') config.hostnameOverride = overrides.hostnameOverride;
  if (flags.v !== undefined) config.logVerbosity = overrides.logVerbosity;
  const ignoredFlags = given.filter((k) => !OVERRIDE_FILE.includes(k)).map(dashed);
  for (const [name, value] of Object.entries(deprecated)) if (value !== undefined) ignoredFlags.push(`--${name}-port`);
  return { config, ignoredFlags, noEffectFlags: [] };
}
