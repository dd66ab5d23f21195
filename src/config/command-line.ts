// The first step of the configuration pipeline: the flags `nftlink proxy` and `nftlink render`
// share. kube-proxy's flags go on to kube-proxy-flags.ts (a KubeProxyConfiguration); nftlink's own
// few become FlagSettings (proxy-settings.ts).

import { networkInterfaces } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_LAYOUT, isLayoutName, LAYOUT_NAMES } from '../proxy/layout/index.js';
import { DEFAULT_TABLE } from '../proxy/layout/names.js';
import { parseGoDuration } from './go-duration.js';
import { KUBE_PROXY_FLAGS, KUBE_PROXY_PARSE_OPTIONS, type DeprecatedPorts, type KubeProxyFlags } from './kube-proxy-flags.js';
import { LOCALHOST_NODEPORTS_GATE, parseFeatureGates, SettingsError, type FlagSettings } from './proxy-settings.js';

export const PROXY_OPTIONS = {
  // kube-proxy's flags that have a configuration field (kube-proxy-flags.ts).
  ...KUBE_PROXY_PARSE_OPTIONS,
  // kube-proxy's flags without one.
  config: { type: 'string' },
  'write-config-to': { type: 'string' },
  cleanup: { type: 'boolean' },
  'init-only': { type: 'boolean' },
  master: { type: 'string' },
  'healthz-port': { type: 'string' },
  'metrics-port': { type: 'string' },
  version: { type: 'boolean' },
  v: { type: 'string', short: 'v' },
  // nftlink's own.
  manifests: { type: 'string' },
  netns: { type: 'string' },
  'node-name': { type: 'string' },
  'node-ip': { type: 'string' },
  'service-cidr': { type: 'string' },
  table: { type: 'string' },
  layout: { type: 'string' },
  'full-sync-period': { type: 'string' },
  'feature-gates': { type: 'string' },
  once: { type: 'boolean' },
} as const;

export const PROXY_USAGE = `  --config FILE                a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1); it wins over flags
  --kubeconfig FILE            the API server to follow (default: in-cluster service account)
  --manifests PATH             instead of an API server: a directory (or file) of manifests, YAML or JSON
  --netns NAME                 program the network namespace NAME (as ip netns names it) instead of this one
  --node-name NAME             this node's name: endpoints with this nodeName are local (default: the hostname)
  --node-ip IP,...             this node's IPs, the primary first (default: as kube-proxy finds them: the
                               Node's InternalIP/ExternalIP, one per family, or --bind-address; with
                               manifests and no Node, the addresses of the namespace's interfaces)
  --cluster-cidr CIDR,...      pod CIDRs: ClusterIP traffic from outside them is masqueraded
  --detect-local-mode MODE     what is pod (local) traffic: ClusterCIDR (default), NodeCIDR (the Node's
                               podCIDRs), BridgeInterface or InterfaceNamePrefix (the interface it came in on)
  --pod-bridge-interface NAME  BridgeInterface: the bridge the pods are on
  --pod-interface-name-prefix P  InterfaceNamePrefix: the prefix of the pods' interfaces (e.g. veth)
  --service-cidr CIDR,...      service CIDRs: traffic to unallocated addresses in them is dropped
  --nodeport-addresses LIST    CIDRs and/or "primary" (the node IPs) that accept NodePorts; 0.0.0.0/0 = all local addresses
  --masquerade-all             masquerade all traffic to ClusterIPs
  --masquerade-bit N           the fwmark bit for masquerading (default 14: 0x4000)
  --min-sync-period D          at most one sync per D (default 1s)
  --sync-period D              a sync at least every D (default 30s)
  --table NAME                 table name (default kube-proxy), in the ip and ip6 families
  --layout slots|kube-proxy    how service ports are laid out (default slots: endpoints in shared bucket maps;
                               kube-proxy: kube-proxy's own ruleset, an anonymous map per service chain)
  --full-sync-period D         compare the tables with the kernel in full at least every D (default 1h):
                               the backstop behind the repair of outside changes
  --feature-gates A=B,...      KubeProxyNFTablesLocalhostNodePorts=false turns off the localhost NodePort proxy
  --bind-address IP            a specific address is the node's primary IP (default 0.0.0.0: the Node's)
  --healthz-bind-address A     /healthz and /livez (default 0.0.0.0:10256; "" turns it off)
  --metrics-bind-address A     /metrics, /proxyMode, /configz (default 127.0.0.1:10249; "" turns it off)
  --proxy-mode MODE            only nftables
  --write-config-to FILE       write the effective configuration and exit
  --cleanup                    delete the proxy's tables and exit
  --init-only                  apply the conntrack sysctls and oom_score_adj, then exit
  --oom-score-adj=N            the proxy's own oom_score_adj (default -999)
  --conntrack-max-per-core N, --conntrack-min N, --conntrack-tcp-timeout-established D,
  --conntrack-tcp-timeout-close-wait D, --conntrack-tcp-be-liberal, --conntrack-udp-timeout D,
  --conntrack-udp-timeout-stream D    kube-proxy's conntrack sysctls
  --iptables-sync-period D, --iptables-min-sync-period D   kube-proxy's spellings of the sync periods
  --bind-address-hard-fail     a server that cannot bind ends the proxy (default: retried)
  --master URL                 the API server's URL, over the kubeconfig's
  --healthz-port N, --metrics-port N   deprecated: 0 turns the server off
  --version                    print the version and exit
  kube-proxy's other flags (--ipvs-*, --iptables-masquerade-bit, --kube-api-qps, --profiling, ...)
  are accepted, checked and logged as having no effect in nftlink's nftables mode.
`;

export type ProxyFlagValues = ReturnType<typeof parseProxyArgs>['values'];

export function parseProxyArgs(argv: string[]) {
  return parseArgs({ args: argv, options: PROXY_OPTIONS, allowPositionals: false, strict: true });
}

const list = (v: string | undefined): string[] => (v ? v.split(',').map((x) => x.trim()).filter(Boolean) : []);

/** The flags that have a KubeProxyConfiguration field, for resolveKubeProxyConfig. */
export function kubeProxyFlags(values: ProxyFlagValues): KubeProxyFlags {
  const f: Record<string, string | boolean> = {};
  for (const [key, { flag }] of Object.entries(KUBE_PROXY_FLAGS)) {
    const v = (values as Record<string, string | boolean | undefined>)[flag];
    if (v !== undefined) f[key] = v;
  }
  // --node-name is nftlink's older spelling of --hostname-override.
  if (f.hostnameOverride === undefined && values['node-name'] !== undefined) f.hostnameOverride = values['node-name'];
  return f as KubeProxyFlags;
}

/** kube-proxy's deprecated --healthz-port and --metrics-port. */
export function deprecatedPorts(values: ProxyFlagValues): DeprecatedPorts {
  return { ...(values['healthz-port'] !== undefined ? { healthz: values['healthz-port'] } : {}), ...(values['metrics-port'] !== undefined ? { metrics: values['metrics-port'] } : {}) };
}

/** The addresses of the interfaces of this process's namespace (loopback and link-local left out). */
function localAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal && !a.address.startsWith('fe80:')) out.push(a.address);
  }
  return out;
}

/** The settings only nftlink's own flags give; the KubeProxyConfiguration gives the rest (settingsFromConfig). */
export function flagSettings(values: ProxyFlagValues): FlagSettings {
  const nodeIPs = list(values['node-ip']);
  if (!nodeIPs.length && values.netns !== undefined && values['nodeport-addresses'] !== undefined) {
    throw new SettingsError('--netns with --nodeport-addresses needs --node-ip: the addresses of another namespace are not visible here');
  }
  const layout = values.layout ?? DEFAULT_LAYOUT;
  if (!isLayoutName(layout)) throw new SettingsError(`--layout: "${layout}" is not a layout (${LAYOUT_NAMES.join(', ')})`);
  let fullSyncPeriodMs: number | undefined;
  if (values['full-sync-period'] !== undefined) {
    const d = parseGoDuration(values['full-sync-period']);
    if ('error' in d || d.ms <= 0) throw new SettingsError(`--full-sync-period: "${values['full-sync-period']}" is not a positive duration (such as 30m or 1h)`);
    fullSyncPeriodMs = d.ms;
  }
  return {
    table: values.table ?? DEFAULT_TABLE,
    layout,
    ...(fullSyncPeriodMs !== undefined ? { fullSyncPeriodMs } : {}),
    // Empty: detected once the Node is known (node-ips.ts, chooseNodeIPs). Given, they are also
    // what nodePortAddresses CIDRs select from (layout-configs.ts), as if they were the interfaces'.
    nodeIPs,
    ...(values.netns === undefined && !nodeIPs.length ? { interfaceAddresses: localAddresses() } : {}),
    serviceCIDRs: list(values['service-cidr']),
    localhostNodePorts: parseFeatureGates(values['feature-gates'])[LOCALHOST_NODEPORTS_GATE] ?? true,
  };
}
