import { describe, expect, it } from 'vitest';
import { resolveKubeProxyConfig } from '../../src/k8s/config-flags.js';
import { localTrafficCIDRs, nodeNameFrom, settingsFromConfig } from '../../src/k8s/config-settings.js';
import { defaultKubeProxyConfig, parseKubeProxyConfig } from '../../src/k8s/kube-proxy-config.js';

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
    const base = settingsFromConfig(defaultKubeProxyConfig(), { table: 'kube-proxy', layout: 'slots', nodeName: 'n', nodeIPs: [], clusterCIDRs: ['198.18.0.0/16'], serviceCIDRs: [], nodePortAddresses: [], masqueradeAll: false, masqueradeBit: 14, minSyncPeriodMs: 1000, syncPeriodMs: 30000, localhostNodePorts: false });
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

describe('settings from the configuration', () => {
  const base = {
    table: 'kube-proxy', layout: 'slots' as const, nodeName: 'ignored', nodeIPs: ['198.18.0.1'], clusterCIDRs: ['198.19.0.0/16'], serviceCIDRs: ['198.18.96.0/20'],
    nodePortAddresses: [], masqueradeAll: false, masqueradeBit: 14, minSyncPeriodMs: 1000, syncPeriodMs: 30_000, localhostNodePorts: true,
  };

  it('maps fields, with NodeCIDR taking the Node podCIDRs', () => {
    expect(settingsFromConfig(FILE, base)).toEqual({ ...base, nodeName: 'from-file', clusterCIDRs: ['198.18.0.0/16'], syncPeriodMs: 10_000 });
    const nodeCidr = { ...defaultKubeProxyConfig(), detectLocalMode: 'NodeCIDR' as const };
    expect(localTrafficCIDRs(nodeCidr, undefined)).toBeUndefined();
    expect(localTrafficCIDRs(nodeCidr, { spec: { podCIDRs: ['198.18.3.0/24', '2001:db8:3::/64'] } })).toEqual(['198.18.3.0/24', '2001:db8:3::/64']);
    expect(nodeNameFrom(defaultKubeProxyConfig(), ' My-Host ')).toBe('my-host');
    const gateOff = { ...defaultKubeProxyConfig(), featureGates: { KubeProxyNFTablesLocalhostNodePorts: false } };
    expect(settingsFromConfig(gateOff, base).localhostNodePorts).toBe(false);
  });
});
