// The firewall chain of a LoadBalancer service with source ranges (kube-proxy layout; slots shares
// it): LB VIPs pass as sources too when a range holds the node's primary IP of the family, as
// kube-proxy's nodeIP. Another node IP in a range does not count.

import { describe, expect, it } from 'vitest';
import { renderRuleExprs } from '../../../src/nft/index.js';
import { benchLayoutConfig } from '../../fixtures/proxy-model.js';
import { serviceObjects } from '../../../src/proxy/layout/kube-proxy/service.js';
import { servicePorts } from '../../../src/proxy/model/service.js';
import type { ServiceEndpoint } from '../../../src/proxy/model/types.js';

const LB_IP = '198.19.50.2';

function firewallRule(nodeIPs: string[], ranges: string[]): string {
  // The benchmark's node, with these node IPs (LayoutConfig keeps them in the settings' order).
  const cfg = { ...benchLayoutConfig({ nodeIP: nodeIPs[0]!, podCIDR: '198.18.128.0/17', serviceCIDR: '198.18.0.0/24' }), nodeIPs };
  const result = servicePorts(
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { namespace: 'ns', name: 'lb' },
      spec: { type: 'LoadBalancer', clusterIP: '198.18.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }], loadBalancerSourceRanges: ranges },
      status: { loadBalancer: { ingress: [{ ip: LB_IP }] } },
    },
    'ipv4',
  );
  if (!('ports' in result)) throw new Error(JSON.stringify(result));
  const ep: ServiceEndpoint = { ip: '198.18.200.5', port: 8080, ready: true, serving: true, terminating: false, isLocal: true };
  const objects = serviceObjects(cfg, result.ports[0]!, [ep]);
  const fw = objects.chains.find((c) => c.chain.name.startsWith('firewall-'));
  if (!fw) throw new Error('no firewall chain');
  expect(fw.rules).toHaveLength(1);
  return renderRuleExprs(fw.rules[0]!.exprs, { family: 'ip' });
}

describe('firewall chain', () => {
  it('lets the LB VIP through when a source range holds the primary node IP', () => {
    expect(firewallRule(['198.19.0.1', '198.19.0.3'], ['198.19.0.0/30', '203.0.113.0/24'])).toBe(`ip saddr != { 198.19.0.0/30, ${LB_IP}, 203.0.113.0/24 } drop`);
  });

  it('does not when only another node IP is in a range', () => {
    expect(firewallRule(['198.19.0.1', '198.19.0.3'], ['198.19.0.3/32', '203.0.113.0/24'])).toBe('ip saddr != { 198.19.0.3, 203.0.113.0/24 } drop');
  });

  it('one range is a plain comparison, as nft loads kube-proxy\'s `{ range }`: no anonymous set', () => {
    expect(firewallRule(['198.19.0.1'], ['203.0.113.0/25'])).toBe('ip saddr != 203.0.113.0/25 drop');
  });
});
