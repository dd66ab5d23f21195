import { kubeconfigYaml } from '../helpers/kubeconfig.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatGoDuration, parseGoDuration } from '../../src/config/go-duration.js';
import { defaultKubeProxyConfig, KubeProxyConfigError, parseKubeProxyConfig, writeConfig } from '../../src/config/kube-proxy-config.js';

// The kube-proxy ConfigMap as `kubeadm init` creates it (kube-system/kube-proxy): config.conf spells
// out every v1alpha1 field, most with their zero value, and kubeconfig.conf points at the real API
// server address with the service account token file.
const KUBEADM_CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-proxy
  namespace: kube-system
  labels:
    app: kube-proxy
data:
  config.conf: |-
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    bindAddress: 0.0.0.0
    bindAddressHardFail: false
    clientConnection:
      acceptContentTypes: ""
      burst: 0
      contentType: ""
      kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
      qps: 0
    clusterCIDR: 198.18.0.0/16,2001:db8:244::/56
    configSyncPeriod: 0s
    conntrack:
      maxPerCore: null
      min: null
      tcpBeLiberal: false
      tcpCloseWaitTimeout: null
      tcpEstablishedTimeout: null
      udpStreamTimeout: 0s
      udpTimeout: 0s
    detectLocal:
      bridgeInterface: ""
      interfaceNamePrefix: ""
    detectLocalMode: ""
    enableProfiling: false
    featureGates:
      NFTablesProxyMode: true
    healthzBindAddress: ""
    hostnameOverride: ""
    iptables:
      localhostNodePorts: null
      masqueradeAll: false
      masqueradeBit: null
      minSyncPeriod: 0s
      syncPeriod: 0s
    ipvs:
      excludeCIDRs: null
      minSyncPeriod: 0s
      scheduler: ""
      strictARP: false
      syncPeriod: 0s
      tcpFinTimeout: 0s
      tcpTimeout: 0s
      udpTimeout: 0s
    kind: KubeProxyConfiguration
    logging:
      flushFrequency: 0
      options:
        json:
          infoBufferSize: "0"
        text:
          infoBufferSize: "0"
      verbosity: 0
    metricsBindAddress: ""
    mode: nftables
    nftables:
      masqueradeAll: false
      masqueradeBit: null
      minSyncPeriod: 0s
      syncPeriod: 0s
    nodePortAddresses: null
    oomScoreAdj: null
    portRange: ""
    showHiddenMetricsForVersion: ""
    winkernel:
      enableDSR: false
      forwardHealthCheckVip: false
      networkName: ""
      rootHnsEndpointName: ""
      sourceVip: ""
  kubeconfig.conf: |-
${kubeconfigYaml({ server: 'https://198.18.0.10:6443', tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token', caFile: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt', indent: '    ' })}`;

const minimal = (extra: string): string => `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n${extra}`;

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KubeProxyConfigError);
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

describe('KubeProxyConfiguration', () => {
  it("decodes kubeadm's config.conf to kube-proxy's nftables defaults", () => {
    const configMap = parse(KUBEADM_CONFIGMAP) as { data: Record<string, string> };
    const cfg = parseKubeProxyConfig(configMap.data['config.conf']!, 'config.conf');
    expect(cfg).toEqual({
      ...defaultKubeProxyConfig(),
      clusterCIDRs: ['198.18.0.0/16', '2001:db8:244::/56'],
      clientConnection: { ...defaultKubeProxyConfig().clientConnection, kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf' },
      featureGates: { NFTablesProxyMode: true },
    });
    expect(cfg.nftables).toEqual({ syncPeriodMs: 30_000, minSyncPeriodMs: 1_000, masqueradeAll: false, masqueradeBit: 14 });
    expect(cfg.healthzBindAddress).toBe('0.0.0.0:10256');
    expect(cfg.metricsBindAddress).toBe('127.0.0.1:10249');
    expect(cfg.conntrack).toMatchObject({ maxPerCore: 32768, min: 131072, tcpEstablishedTimeoutMs: 86_400_000, tcpCloseWaitTimeoutMs: 3_600_000 });
  });

  it('reads set values', () => {
    const cfg = parseKubeProxyConfig(
      minimal(`mode: ""
detectLocalMode: NodeCIDR
nodePortAddresses: [primary]
healthzBindAddress: 198.18.0.1
metricsBindAddress: "[::1]:9999"
hostnameOverride: " Node-A "
nftables:
  syncPeriod: 1m0s
  minSyncPeriod: 500ms
  masqueradeAll: true
  masqueradeBit: 0
conntrack:
  maxPerCore: 0
  udpTimeout: 2m
`),
    );
    expect(cfg.mode).toBe('nftables');
    expect(cfg.detectLocalMode).toBe('NodeCIDR');
    expect(cfg.nodePortAddresses).toEqual(['primary']);
    expect(cfg.healthzBindAddress).toBe('198.18.0.1:10256');
    expect(cfg.metricsBindAddress).toBe('[::1]:9999');
    expect(cfg.hostnameOverride).toBe('node-a');
    expect(cfg.nftables).toEqual({ syncPeriodMs: 60_000, minSyncPeriodMs: 500, masqueradeAll: true, masqueradeBit: 0 });
    expect(cfg.conntrack.maxPerCore).toBe(0);
    expect(cfg.conntrack.udpTimeoutMs).toBe(120_000);
  });

  it("as kube-proxy, falls back to lenient decoding when only strictness fails: unknown and repeated fields are noted, not fatal", () => {
    const strictErrors: string[] = [];
    const cfg = parseKubeProxyConfig(minimal('udpIdleTimeout: 250ms\nnftables:\n  syncPerod: 30s\n  syncPeriod: 5s\n  syncPeriod: 7s\n'), 'kp.yaml', strictErrors);
    expect(cfg.nftables.syncPeriodMs).toBe(7_000);
    expect(strictErrors).toHaveLength(3);
    expect(strictErrors[0]).toMatch(/^kp\.yaml: not valid YAML: .*[Mm]ap keys must be unique/);
    expect(strictErrors.slice(1)).toEqual(['kp.yaml: udpIdleTimeout: unknown field', 'kp.yaml: nftables.syncPerod: unknown field']);
    // A wrong type or value is no strictness error: fatal either way, as in kube-proxy.
    expect(errorOf(() => parseKubeProxyConfig(minimal('nftables:\n  syncPeriod: 30\n'), 'kp.yaml', []))).toMatch(/^kp\.yaml: nftables\.syncPeriod: must be a duration string/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('mode: [\n'), 'kp.yaml', []))).toMatch(/^kp\.yaml: not valid YAML/);
  });

  it('oomScoreAdj: -999 by default, set values kept, out of range refused', () => {
    expect(parseKubeProxyConfig(minimal('oomScoreAdj: null\n')).oomScoreAdj).toBe(-999);
    expect(parseKubeProxyConfig(minimal('oomScoreAdj: 0\n')).oomScoreAdj).toBe(0);
    expect(parseKubeProxyConfig(minimal('oomScoreAdj: -998\n')).oomScoreAdj).toBe(-998);
    expect(errorOf(() => parseKubeProxyConfig(minimal('oomScoreAdj: -1001\n')))).toBe('oomScoreAdj: -1001 is not in -1000..1000');
    expect(errorOf(() => parseKubeProxyConfig(minimal('iptables:\n  masqueradeBit: 40\n')))).toBe('iptables.masqueradeBit: 40 is not in 0..31');
  });

  it('names an unknown field by its path', () => {
    expect(errorOf(() => parseKubeProxyConfig(minimal('nftables:\n  syncPerod: 30s\n')))).toBe('nftables.syncPerod: unknown field');
    expect(errorOf(() => parseKubeProxyConfig(minimal('clusterCidr: 198.18.0.0/15\n'), 'kp.yaml'))).toBe('kp.yaml: clusterCidr: unknown field');
  });

  it('refuses a bad duration, naming the field', () => {
    expect(errorOf(() => parseKubeProxyConfig(minimal('nftables:\n  syncPeriod: 30\n')))).toMatch(/^nftables\.syncPeriod: must be a duration string/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('nftables:\n  minSyncPeriod: 1 second\n')))).toBe(
      'nftables.minSyncPeriod: "1 second" is not a duration (Go syntax, like 30s, 1m0s, 500ms, 1h30m)',
    );
  });

  it('refuses wrong types, other modes and bad values', () => {
    expect(errorOf(() => parseKubeProxyConfig(minimal('nftables:\n  masqueradeAll: "yes"\n')))).toMatch(/^nftables\.masqueradeAll: must be true or false/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('nodePortAddresses: 198.18.0.0/15\n')))).toMatch(/^nodePortAddresses: must be a list of strings/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('mode: iptables\n')))).toMatch(/^mode: "iptables" is not supported: nftlink implements only the nftables mode/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('mode: ipvs\n')))).toMatch(/^mode: "ipvs" is not supported/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('nftables:\n  masqueradeBit: 32\n')))).toBe('nftables.masqueradeBit: 32 is not in 0..31');
    expect(errorOf(() => parseKubeProxyConfig(minimal('clusterCIDR: 198.18.0.0/15,banana\n')))).toBe('clusterCIDR: "banana" is not a CIDR');
    expect(errorOf(() => parseKubeProxyConfig(minimal('featureGates:\n  Foo: 1\n')))).toBe('featureGates.Foo: must be true or false, not number 1');
    expect(errorOf(() => parseKubeProxyConfig('apiVersion: v1\nkind: KubeProxyConfiguration\n'))).toMatch(/^apiVersion: must be kubeproxy.config.k8s.io\/v1alpha1/);
    expect(errorOf(() => parseKubeProxyConfig(minimal('mode: nftables\nmode: nftables\n')))).toMatch(/^not valid YAML/);
  });

  it('detectLocalMode BridgeInterface and InterfaceNamePrefix need their interface, and round-trip', () => {
    expect(errorOf(() => parseKubeProxyConfig(minimal('detectLocalMode: BridgeInterface\n')))).toBe('detectLocal.bridgeInterface: required with detectLocalMode BridgeInterface');
    expect(errorOf(() => parseKubeProxyConfig(minimal('detectLocalMode: InterfaceNamePrefix\ndetectLocal:\n  interfaceNamePrefix: a-very-long-prefix\n')))).toMatch(
      /^detectLocal\.interfaceNamePrefix: "a-very-long-prefix" is not an interface name/,
    );
    expect(errorOf(() => parseKubeProxyConfig(minimal('detectLocalMode: Bridge\n')))).toMatch(/^detectLocalMode: "Bridge" is not a mode/);
    const cfg = parseKubeProxyConfig(minimal('detectLocalMode: InterfaceNamePrefix\ndetectLocal:\n  interfaceNamePrefix: veth\n'));
    expect(cfg.detectLocal).toEqual({ bridgeInterface: '', interfaceNamePrefix: 'veth' });
    expect(parseKubeProxyConfig(writeConfig(cfg))).toEqual(cfg);
  });

  it('accepts and ignores the other modes’ blocks', () => {
    const cfg = parseKubeProxyConfig(minimal('iptables:\n  syncPeriod: 5s\nipvs:\n  scheduler: rr\nwinkernel:\n  enableDSR: true\n'));
    expect(cfg).toEqual(defaultKubeProxyConfig());
    expect(errorOf(() => parseKubeProxyConfig(minimal('ipvs:\n  schedular: rr\n')))).toBe('ipvs.schedular: unknown field');
  });

  it('keeps bindAddress (the node IP it names) and refuses one that is not an IP address', () => {
    expect(parseKubeProxyConfig(minimal('bindAddress: 198.19.3.4\n')).bindAddress).toBe('198.19.3.4');
    expect(parseKubeProxyConfig(minimal('bindAddress: 2001:db8::7\n')).bindAddress).toBe('2001:db8::7');
    expect(parseKubeProxyConfig(minimal('')).bindAddress).toBe('0.0.0.0');
    expect(errorOf(() => parseKubeProxyConfig(minimal('bindAddress: node-1\n')))).toBe('bindAddress: "node-1" is not an IP address');
    expect(errorOf(() => parseKubeProxyConfig(minimal('bindAddress: 198.19.0.0/16\n')))).toBe('bindAddress: "198.19.0.0/16" is not an IP address');
  });

  it('round-trips write → read', () => {
    const cfg = {
      ...defaultKubeProxyConfig(),
      clusterCIDRs: ['198.18.0.0/16'],
      detectLocalMode: 'NodeCIDR' as const,
      nodePortAddresses: ['198.18.0.0/15', '::/0'],
      hostnameOverride: 'node-1',
      nftables: { syncPeriodMs: 90_500, minSyncPeriodMs: 250, masqueradeAll: true, masqueradeBit: 3 },
      conntrack: { ...defaultKubeProxyConfig().conntrack, udpStreamTimeoutMs: 120_000, maxPerCore: 0 },
      featureGates: { Foo: false },
      logVerbosity: 4,
    };
    const text = writeConfig(cfg);
    expect(text).toContain('syncPeriod: 1m30.5s');
    expect(parseKubeProxyConfig(text)).toEqual(cfg);
    expect(parseKubeProxyConfig(writeConfig(defaultKubeProxyConfig()))).toEqual(defaultKubeProxyConfig());
  });
});

describe('Go durations', () => {
  it('parses and formats as Go does', () => {
    expect(parseGoDuration('1m0s')).toEqual({ ms: 60_000 });
    expect(parseGoDuration('1.5h')).toEqual({ ms: 5_400_000 });
    expect(parseGoDuration('0')).toEqual({ ms: 0 });
    expect(parseGoDuration('1500us')).toEqual({ ms: 2 });
    expect(parseGoDuration('10')).toHaveProperty('error');
    expect(parseGoDuration('')).toHaveProperty('error');
    expect(formatGoDuration(30_000)).toBe('30s');
    expect(formatGoDuration(60_000)).toBe('1m0s');
    expect(formatGoDuration(86_400_000)).toBe('24h0m0s');
    expect(formatGoDuration(500)).toBe('500ms');
    expect(formatGoDuration(1_500)).toBe('1.5s');
    expect(formatGoDuration(0)).toBe('0s');
  });
});
