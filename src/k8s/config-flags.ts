// How kube-proxy combines its command line with --config (cmd/kube-proxy/app/options.go,
// Options.Complete), for `nftlink proxy` to behave the same:
//
// - without --config, the flags are the configuration (on kube-proxy's defaults);
// - with --config, the file is the configuration and the flags that have a field in it are
//   ignored, except -v and --hostname-override, which kube-proxy applies over the file
//   (copyLogsFromFlags, processHostnameOverrideFlag). The ignored flags are returned so that the
//   caller can warn about them (kube-proxy ignores them silently, which surprises people).
//
// Flag values go through the same decoder as the file, so they are checked the same way; errors
// name the flag.

import { decodeKubeProxyConfig, KUBE_PROXY_CONFIG_API_VERSION, KUBE_PROXY_CONFIG_KIND, KubeProxyConfigError, type KubeProxyConfig } from './kube-proxy-config.js';

/** The flags that have a KubeProxyConfiguration field, as parsed (strings, one boolean). */
export interface KubeProxyFlags {
  kubeconfig?: string;
  hostnameOverride?: string;
  proxyMode?: string;
  clusterCIDR?: string;
  detectLocalMode?: string;
  podBridgeInterface?: string;
  podInterfaceNamePrefix?: string;
  nodePortAddresses?: string;
  masqueradeAll?: boolean;
  masqueradeBit?: string;
  syncPeriod?: string;
  minSyncPeriod?: string;
  bindAddress?: string;
  healthzBindAddress?: string;
  metricsBindAddress?: string;
  v?: string;
}

/** Flag name of each KubeProxyFlags key, and the configuration field it sets. */
const FLAGS: Record<keyof KubeProxyFlags, { flag: string; field: string }> = {
  kubeconfig: { flag: '--kubeconfig', field: 'clientConnection.kubeconfig' },
  hostnameOverride: { flag: '--hostname-override', field: 'hostnameOverride' },
  proxyMode: { flag: '--proxy-mode', field: 'mode' },
  clusterCIDR: { flag: '--cluster-cidr', field: 'clusterCIDR' },
  detectLocalMode: { flag: '--detect-local-mode', field: 'detectLocalMode' },
  podBridgeInterface: { flag: '--pod-bridge-interface', field: 'detectLocal.bridgeInterface' },
  podInterfaceNamePrefix: { flag: '--pod-interface-name-prefix', field: 'detectLocal.interfaceNamePrefix' },
  nodePortAddresses: { flag: '--nodeport-addresses', field: 'nodePortAddresses' },
  masqueradeAll: { flag: '--masquerade-all', field: 'nftables.masqueradeAll' },
  masqueradeBit: { flag: '--masquerade-bit', field: 'nftables.masqueradeBit' },
  syncPeriod: { flag: '--sync-period', field: 'nftables.syncPeriod' },
  minSyncPeriod: { flag: '--min-sync-period', field: 'nftables.minSyncPeriod' },
  bindAddress: { flag: '--bind-address', field: 'bindAddress' },
  healthzBindAddress: { flag: '--healthz-bind-address', field: 'healthzBindAddress' },
  metricsBindAddress: { flag: '--metrics-bind-address', field: 'metricsBindAddress' },
  v: { flag: '-v', field: 'logging.verbosity' },
};

/** Applied over a --config file, as kube-proxy does. */
const OVERRIDE_FILE: readonly (keyof KubeProxyFlags)[] = ['hostnameOverride', 'v'];

export interface ResolvedConfig {
  config: KubeProxyConfig;
  /** Flags given together with --config that the file overrides (for a warning). */
  ignoredFlags: string[];
}

function integer(text: string, flag: string): number {
  if (!/^-?\d+$/.test(text.trim())) throw new KubeProxyConfigError(`${flag}: "${text}" is not an integer`);
  return Number(text);
}

/** The document the flags describe (only the fields of flags that were given). */
function documentFromFlags(flags: KubeProxyFlags, keys: readonly (keyof KubeProxyFlags)[]): Record<string, unknown> {
  const doc: Record<string, unknown> = { apiVersion: KUBE_PROXY_CONFIG_API_VERSION, kind: KUBE_PROXY_CONFIG_KIND };
  const set = (path: string, value: unknown): void => {
    const parts = path.split('.');
    let at = doc;
    for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
    at[parts[parts.length - 1]!] = value;
  };
  for (const key of keys) {
    const value = flags[key];
    if (value === undefined) continue;
    const { flag, field } = FLAGS[key];
    if (key === 'nodePortAddresses') {
      set(field, String(value).split(',').map((x) => x.trim()).filter(Boolean));
    } else if (key === 'masqueradeBit' || key === 'v') {
      set(field, integer(String(value), flag));
    } else {
      set(field, value);
    }
  }
  return doc;
}

/** Decodes, naming the flag instead of the field in errors. */
function decodeFlags(doc: Record<string, unknown>): KubeProxyConfig {
  try {
    return decodeKubeProxyConfig(doc);
  } catch (err) {
    if (!(err instanceof KubeProxyConfigError)) throw err;
    for (const { flag, field } of Object.values(FLAGS)) {
      if (err.message.startsWith(`${field}: `) || err.message.startsWith(`${field}[`)) {
        throw new KubeProxyConfigError(`${flag}: ${err.message.slice(err.message.indexOf(': ') + 2)}`);
      }
    }
    throw err;
  }
}

/**
 * The configuration to run with: the file's when given (with -v and --hostname-override over it),
 * else the flags' on kube-proxy's defaults. An empty --healthz-bind-address or
 * --metrics-bind-address disables that server, as in kube-proxy.
 */
export function resolveKubeProxyConfig(flags: KubeProxyFlags, file?: KubeProxyConfig): ResolvedConfig {
  const given = (Object.keys(FLAGS) as (keyof KubeProxyFlags)[]).filter((k) => flags[k] !== undefined);
  if (!file) {
    const config = decodeFlags(documentFromFlags(flags, given));
    if (flags.healthzBindAddress === '') config.healthzBindAddress = '';
    if (flags.metricsBindAddress === '') config.metricsBindAddress = '';
    return { config, ignoredFlags: [] };
  }
  const config: KubeProxyConfig = structuredClone(file);
  const overrides = decodeFlags(documentFromFlags(flags, OVERRIDE_FILE));
  if (flags.hostnameOverride !== undefined && flags.hostnameOverride !== '') config.hostnameOverride = overrides.hostnameOverride;
  if (flags.v !== undefined) config.logVerbosity = overrides.logVerbosity;
  const ignoredFlags = given.filter((k) => !OVERRIDE_FILE.includes(k)).map((k) => FLAGS[k].flag);
  return { config, ignoredFlags };
}
