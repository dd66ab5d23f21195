import { describe, expect, it } from 'vitest';
import { resolveKubeProxyConfig } from '../../src/config/kube-proxy-flags.js';
import { deprecatedPorts, kubeProxyFlags, parseProxyArgs } from '../../src/config/command-line.js';
import { localTrafficCIDRs, nodeNameFrom, settingsFromConfig } from '../../src/config/proxy-settings.js';
import { defaultKubeProxyConfig, parseKubeProxyConfig } from '../../src/config/kube-proxy-config.js';

const FILE = parseKubeProxyConfig(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 198.18.0.0/16
hostnameOverride: from-file
nftables:
  syncPeriod: 10s
`);

describe('flags and --config', () => {
  it('builds the configuration from flags alone', () => {
    const { config, ignoredFlags } = resolveKubeProxyConfig({
      clusterCIDR: '198.18.0.0/16',
      nodePortAddresses: 'primary',
      masqueradeAll: true,
      healthzBindAddress: '',
      metricsBindAddress: '0.0.0.0:10249',
      proxyMode: 'nftables',
      v: '4',
      kubeconfig: '/etc/kube-proxy/kubeconfig',
    });
    expect(ignoredFlags).toEqual([]);
    expect(config).toMatchObject({
      clusterCIDRs: ['198.18.0.0/16'],
      nodePortAddresses: ['primary'],
      healthzBindAddress: '',
      metricsBindAddress: '0.0.0.0:10249',
      logVerbosity: 4,
      nftables: { masqueradeAll: true, syncPeriodMs: 30_000 },
      clientConnection: { kubeconfig: '/etc/kube-proxy/kubeconfig' },
    });
  });

  it('--detect-local-mode with --pod-interface-name-prefix or --pod-bridge-interface: pod traffic by interface', () => {
    const base = { table: 'kube-proxy', layout: 'slots' as const, nodeIPs: [], serviceCIDRs: [], localhostNodePorts: false };
    const prefix = resolveKubeProxyConfig({ detectLocalMode: 'InterfaceNamePrefix', podInterfaceNamePrefix: 'veth' }).config;
    expect(settingsFromConfig(prefix, base)).toMatchObject({ clusterCIDRs: [], localInterface: { name: 'veth', prefix: true } });
    const bridge = resolveKubeProxyConfig({ detectLocalMode: 'BridgeInterface', podBridgeInterface: 'cbr0' }).config;
    expect(settingsFromConfig(bridge, base)).toMatchObject({ clusterCIDRs: [], localInterface: { name: 'cbr0', prefix: false } });
    expect(() => resolveKubeProxyConfig({ detectLocalMode: 'BridgeInterface' })).toThrow(/^--pod-bridge-interface: required with detectLocalMode BridgeInterface/);
  });

  it('names the flag in errors', () => {
    expect(() => resolveKubeProxyConfig({ proxyMode: 'ipvs' })).toThrow(/^--proxy-mode: "ipvs" is not supported/);
    expect(() => resolveKubeProxyConfig({ syncPeriod: 'soon' })).toThrow(/^--sync-period: "soon" is not a duration/);
    expect(() => resolveKubeProxyConfig({ nodePortAddresses: '198.18.0.0/16,nope' })).toThrow(/^--nodeport-addresses: "nope" is not a CIDR/);
    expect(() => resolveKubeProxyConfig({ v: 'loud' })).toThrow('-v: "loud" is not an integer');
  });

  it('lets the file win over flags, except -v and --hostname-override', () => {
    const { config, ignoredFlags } = resolveKubeProxyConfig({ clusterCIDR: '198.18.0.0/16', masqueradeAll: true, hostnameOverride: 'Node-X', v: '2' }, FILE);
    expect(config.clusterCIDRs).toEqual(['198.18.0.0/16']);
    expect(config.nftables.masqueradeAll).toBe(false);
    expect(config.nftables.syncPeriodMs).toBe(10_000);
    expect(config.hostnameOverride).toBe('node-x');
    expect(config.logVerbosity).toBe(2);
    expect(ignoredFlags).toEqual(['--cluster-cidr', '--masquerade-all']);
  });
});

describe("kube-proxy's command line, unchanged", () => {
  // A DaemonSet's kube-proxy arguments as managed clusters write them (every flag kube-proxy 1.33-1.36 has).
  const resolve = (args: string[]) => {
    const { values } = parseProxyArgs(args);
    return resolveKubeProxyConfig(kubeProxyFlags(values), undefined, deprecatedPorts(values));
  };

  it('takes the flags that matter in nftables mode, and lists the others with the reason they change nothing', () => {
    const { config, noEffectFlags } = resolve([
      '--proxy-mode=nftables', '--hostname-override=Node-7', '--cluster-cidr=198.18.0.0/16', '--oom-score-adj=-998', '--v=2',
      '--iptables-sync-period=1m', '--iptables-min-sync-period=10s', '--ipvs-sync-period=1m', '--ipvs-min-sync-period=10s', '--ipvs-scheduler=rr',
      '--conntrack-max-per-core=0', '--conntrack-min=65536', '--conntrack-tcp-timeout-established=12h', '--conntrack-tcp-timeout-close-wait=30m',
      '--conntrack-tcp-be-liberal', '--conntrack-udp-timeout=30s', '--conntrack-udp-timeout-stream=2m',
      '--kube-api-qps=20.5', '--kube-api-burst=40', '--kube-api-content-type=application/json', '--config-sync-period=5m',
      '--iptables-masquerade-bit=13', '--profiling', '--bind-address-hard-fail', '--logging-format=json',
    ]);
    expect(config).toMatchObject({
      hostnameOverride: 'node-7',
      clusterCIDRs: ['198.18.0.0/16'],
      oomScoreAdj: -998,
      logVerbosity: 2,
      bindAddressHardFail: true,
      nftables: { syncPeriodMs: 60_000, minSyncPeriodMs: 10_000, masqueradeBit: 14 },
      conntrack: { maxPerCore: 0, min: 65_536, tcpEstablishedTimeoutMs: 12 * 3_600_000, tcpCloseWaitTimeoutMs: 1_800_000, tcpBeLiberal: true, udpTimeoutMs: 30_000, udpStreamTimeoutMs: 120_000 },
      clientConnection: { qps: 20.5, burst: 40, contentType: 'application/json' },
      configSyncPeriodMs: 300_000,
    });
    expect(noEffectFlags.map((f) => f.flag)).toEqual([
      '--kube-api-content-type', '--kube-api-qps', '--kube-api-burst', '--iptables-masquerade-bit', '--ipvs-sync-period', '--ipvs-min-sync-period',
      '--ipvs-scheduler', '--profiling', '--config-sync-period', '--logging-format',
    ]);
    expect(noEffectFlags.find((f) => f.flag === '--ipvs-scheduler')!.reason).toMatch(/another proxy mode/);
  });

  it('checks the ignored flags as kube-proxy does, naming them', () => {
    expect(() => resolve(['--iptables-masquerade-bit=32'])).toThrow('--iptables-masquerade-bit: 32 is not in 0..31');
    expect(() => resolve(['--oom-score-adj=-2000'])).toThrow('--oom-score-adj: -2000 is not in -1000..1000');
    expect(() => resolve(['--kube-api-qps=fast'])).toThrow('--kube-api-qps: "fast" is not a number');
    expect(() => resolve(['--ipvs-tcp-timeout=soon'])).toThrow(/^--ipvs-tcp-timeout: "soon" is not a duration/);
    expect(() => resolve(['--sync-period=5s', '--iptables-sync-period=10s'])).toThrow('--sync-period and --iptables-sync-period both set nftables.syncPeriod, to different values');
    expect(resolve(['--sync-period=10s', '--iptables-sync-period=10s']).config.nftables.syncPeriodMs).toBe(10_000);
  });

  it('the deprecated --healthz-port and --metrics-port: 0 turns the server off, a port completes an address without one', () => {
    expect(resolve(['--healthz-port=0']).config.healthzBindAddress).toBe('');
    expect(resolve(['--metrics-port=0']).config.metricsBindAddress).toBe('');
    expect(resolve(['--healthz-port=12345']).config.healthzBindAddress).toBe('0.0.0.0:10256');
    expect(resolve(['--healthz-bind-address=198.18.0.1', '--healthz-port=12345']).config.healthzBindAddress).toBe('198.18.0.1:12345');
    expect(resolve(['--metrics-bind-address=2001:db8::1', '--metrics-port=9999']).config.metricsBindAddress).toBe('[2001:db8::1]:9999');
    expect(resolve(['--healthz-bind-address=198.18.0.1:10000', '--healthz-port=12345']).config.healthzBindAddress).toBe('198.18.0.1:10000');
    expect(() => resolve(['--healthz-port=70000'])).toThrow('--healthz-port: 70000 is not a port (0..65535)');
    // With --config the file decides, as in kube-proxy.
    expect(resolveKubeProxyConfig({}, FILE, { healthz: '0' }).ignoredFlags).toEqual(['--healthz-port']);
  });
});

describe('settings from the configuration', () => {
  // What only nftlink's own flags give; the configuration gives the rest.
  const base = { table: 'kube-proxy', layout: 'slots' as const, nodeIPs: ['198.18.0.1'], serviceCIDRs: ['198.18.96.0/20'], localhostNodePorts: true };

  it('maps fields, with NodeCIDR taking the Node podCIDRs', () => {
    expect(settingsFromConfig(FILE, base)).toEqual({
      ...base, nodeName: 'from-file', clusterCIDRs: ['198.18.0.0/16'], nodePortAddresses: [], masqueradeAll: false, masqueradeBit: 14, minSyncPeriodMs: 1000, syncPeriodMs: 10_000,
    });
    const nodeCidr = { ...defaultKubeProxyConfig(), detectLocalMode: 'NodeCIDR' as const };
    expect(localTrafficCIDRs(nodeCidr, undefined)).toBeUndefined();
    expect(localTrafficCIDRs(nodeCidr, { spec: { podCIDRs: ['198.18.3.0/24', '2001:db8:3::/64'] } })).toEqual(['198.18.3.0/24', '2001:db8:3::/64']);
    expect(nodeNameFrom(defaultKubeProxyConfig(), ' My-Host ')).toBe('my-host');
    const gateOff = { ...defaultKubeProxyConfig(), featureGates: { KubeProxyNFTablesLocalhostNodePorts: false } };
    expect(settingsFromConfig(gateOff, base).localhostNodePorts).toBe(false);
  });
});
