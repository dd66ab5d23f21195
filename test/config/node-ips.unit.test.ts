// This node's IPs as kube-proxy finds them (src/config/node-ips.ts), and what they decide: which
// addresses take NodePorts for nodePortAddresses "primary" and for CIDRs (layoutConfigs).

import { describe, expect, it } from 'vitest';
import { chooseNodeIPs, nodeHostIPs } from '../../src/config/node-ips.js';
import type { Node } from '../../src/k8s/objects.js';
import { layoutConfigs } from '../../src/config/layout-configs.js';
import type { ProxySettings } from '../../src/config/proxy-settings.js';

const node = (...addresses: [type: string, address: string][]): Node => ({ metadata: { name: 'n1' }, status: { addresses: addresses.map(([type, address]) => ({ type, address })) } });

describe('nodeHostIPs (GetNodeHostIPs)', () => {
  it('takes the first InternalIP, else the first ExternalIP, then the first address of the other family', () => {
    expect(nodeHostIPs(node(['Hostname', 'n1'], ['ExternalIP', '198.19.9.9'], ['InternalIP', '198.18.0.7'], ['InternalIP', '198.18.0.8']))).toEqual(['198.18.0.7']);
    expect(nodeHostIPs(node(['ExternalIP', '198.19.9.9']))).toEqual(['198.19.9.9']);
    expect(nodeHostIPs(node(['InternalIP', '2001:db8::7'], ['InternalIP', '2001:db8::8'], ['ExternalIP', '198.19.9.9']))).toEqual(['2001:db8::7', '198.19.9.9']);
  });

  it('skips what is not an IP address, and knows nothing of a Node without addresses', () => {
    expect(nodeHostIPs(node(['InternalIP', 'n1.example'], ['InternalIP', '198.18.0.7']))).toEqual(['198.18.0.7']);
    expect(nodeHostIPs(node())).toEqual([]);
    expect(nodeHostIPs(undefined)).toEqual([]);
  });
});

describe('chooseNodeIPs (detectNodeIPs)', () => {
  const base = { flagIPs: [] as string[], bindAddress: '0.0.0.0' };

  it('uses --node-ip as given', () => {
    expect(chooseNodeIPs({ ...base, flagIPs: ['198.18.0.1', '198.18.0.2'], node: node(['InternalIP', '198.18.0.7']) })).toEqual({ ips: ['198.18.0.1', '198.18.0.2'], source: 'flag', loopback: [] });
  });

  it("uses the Node's IPs, one per family, the Node's first family first; a missing family gets loopback", () => {
    expect(chooseNodeIPs({ ...base, node: node(['InternalIP', '198.18.0.7']), interfaceAddresses: ['198.18.5.5'] })).toEqual({ ips: ['198.18.0.7', '::1'], source: 'node', loopback: ['ipv6'] });
    expect(chooseNodeIPs({ ...base, node: node(['InternalIP', '2001:db8::7'], ['InternalIP', '198.18.0.7']) })).toEqual({ ips: ['2001:db8::7', '198.18.0.7'], source: 'node', loopback: [] });
  });

  it('lets a specific bindAddress replace the primary IP (its family becomes the primary one)', () => {
    expect(chooseNodeIPs({ ...base, bindAddress: '2001:db8::9', node: node(['InternalIP', '198.18.0.7']) })).toEqual({ ips: ['2001:db8::9', '198.18.0.7'], source: 'bindAddress', loopback: [] });
    expect(chooseNodeIPs({ ...base, bindAddress: '::', node: node(['InternalIP', '198.18.0.7']) }).source).toBe('node');
  });

  it('assumes loopback when nothing is known, unless the caller offers interface addresses (manifests without a Node)', () => {
    expect(chooseNodeIPs({ ...base, node: undefined })).toEqual({ ips: ['127.0.0.1', '::1'], source: 'loopback', loopback: ['ipv4', 'ipv6'] });
    expect(chooseNodeIPs({ ...base, node: node(), interfaceAddresses: ['198.18.5.5', '2001:db8::5'] })).toEqual({ ips: ['198.18.5.5', '2001:db8::5'], source: 'interfaces', loopback: [] });
  });
});

describe('NodePort addresses from node IPs', () => {
  const settings: Omit<ProxySettings, 'layout'> = {
    table: 'kube-proxy',
    nodeName: 'n1',
    nodeIPs: ['198.18.0.7', '::1'],
    interfaceAddresses: ['198.18.0.7', '198.18.200.1', '2001:db8::5'],
    clusterCIDRs: [],
    serviceCIDRs: [],
    nodePortAddresses: [],
    masqueradeAll: false,
    masqueradeBit: 14,
    minSyncPeriodMs: 1000,
    syncPeriodMs: 30000,
    localhostNodePorts: false,
  };

  it('takes NodePorts on the primary IP only by default, never on a loopback node IP', () => {
    const [v4, v6] = layoutConfigs(settings);
    expect(v4!.nodePortAddresses).toEqual(['198.18.0.7']);
    expect(v6!.nodePortAddresses).toEqual([]);
    expect(v4!.nodeIPs).toEqual(['198.18.0.7']);
  });

  it("matches CIDRs against the namespace's interface addresses, not only the node IPs", () => {
    const [v4, v6] = layoutConfigs({ ...settings, nodePortAddresses: ['198.18.0.0/16', '2001:db8::/32'] });
    expect(v4!.nodePortAddresses).toEqual(['198.18.0.7', '198.18.200.1']);
    expect(v6!.nodePortAddresses).toEqual(['2001:db8::5']);
  });
});
