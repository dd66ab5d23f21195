// kube-proxy 1.37's single-endpoint DNAT in the kube-proxy layout (docs/kube-proxy-contract.md): a
// service or local chain with one endpoint holds one direct `dnat to addr:port` rule, no numgen
// and no map, in every shape that has such a chain (ClusterIP, NodePort through the external
// chain, Local traffic policies); two endpoints keep the numgen map; ClientIP affinity keeps its
// endpoint chains and numgen vmap.

import { describe, expect, it } from 'vitest';
import type { Service } from '../../../src/k8s/objects.js';
import { renderRuleExprs } from '../../../src/nft/index.js';
import { layoutConfigs } from '../../../src/config/layout-configs.js';
import { serviceObjects } from '../../../src/proxy/layout/kube-proxy/service.js';
import { servicePorts } from '../../../src/proxy/model/service.js';
import type { IPFamily, ServiceEndpoint } from '../../../src/proxy/model/types.js';
import { proxySettings } from '../dataplane/helpers.js';

// The data-plane tests' node (both families), without its network: these tests only build objects.
const [V4, V6] = layoutConfigs(proxySettings());

const EP4 = '198.18.10.2';
const EP6 = '2001:db8:10a::2';

function endpoint(ip: string, isLocal = true): ServiceEndpoint {
  return { ip, port: 8080, ready: true, serving: true, terminating: false, isLocal, nodeName: isLocal ? 'node' : 'other' };
}

/** Every chain of the service port, by kind (service, local, external, endpoint...), as `nft list` rule text. */
function chains(spec: Partial<NonNullable<Service['spec']>>, endpoints: ServiceEndpoint[], family: IPFamily = 'ipv4'): Record<string, string[]> {
  const v6 = family === 'ipv6';
  const clusterIP = v6 ? '2001:db8:200::20' : '198.18.200.20';
  const svc: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'ns', name: 'solo' },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: [v6 ? 'IPv6' : 'IPv4'],
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, ...(spec.type === 'NodePort' ? { nodePort: 30080 } : {}) }],
      ...spec,
    },
  };
  const result = servicePorts(svc, family);
  if (!('ports' in result)) throw new Error(JSON.stringify(result));
  const objects = serviceObjects(v6 ? V6! : V4!, result.ports[0]!, endpoints);
  const out: Record<string, string[]> = {};
  for (const { chain, rules } of objects.chains) {
    const kind = chain.name.slice(0, chain.name.indexOf('-'));
    expect(out[kind], `two ${kind} chains`).toBeUndefined();
    out[kind] = rules.map((r) => renderRuleExprs(r.exprs, { family: v6 ? 'ip6' : 'ip' }));
  }
  return out;
}

describe('kube-proxy layout, one endpoint (kube-proxy 1.37)', () => {
  it('ClusterIP: the service chain is one direct DNAT rule', () => {
    expect(chains({}, [endpoint(EP4)])).toEqual({ service: [`meta l4proto tcp dnat to ${EP4}:8080`] });
  });

  it('ClusterIP over IPv6: the address in brackets, as nft accepts it', () => {
    expect(chains({}, [endpoint(EP6)], 'ipv6')).toEqual({ service: [`meta l4proto tcp dnat to [${EP6}]:8080`] });
  });

  it('UDP and SCTP: the direct rule matches the service port protocol', () => {
    for (const protocol of ['UDP', 'SCTP'] as const) {
      const c = chains({ ports: [{ name: 'p', protocol, port: 53, targetPort: 8080 }] }, [endpoint(EP4)]);
      expect(c).toEqual({ service: [`meta l4proto ${protocol.toLowerCase()} dnat to ${EP4}:8080`] });
    }
  });

  it('NodePort: the external chain marks and jumps to the service chain, which DNATs directly', () => {
    const c = chains({ type: 'NodePort' }, [endpoint(EP4)]);
    expect(c.external).toEqual(['meta mark set meta mark | 0x00004000', expect.stringMatching(/^goto service-[A-Z2-7]{8}-ns\/solo\/tcp\/http$/)]);
    expect(c.service).toEqual([`meta l4proto tcp dnat to ${EP4}:8080`]);
  });

  it('externalTrafficPolicy Local: the local chain DNATs directly to its one local endpoint', () => {
    // Two cluster endpoints (one on another node) keep the service chain's map; one is local.
    const c = chains({ type: 'NodePort', externalTrafficPolicy: 'Local' }, [endpoint(EP4), endpoint('198.18.11.2', false)]);
    expect(c.local).toEqual([`meta l4proto tcp dnat to ${EP4}:8080`]);
    expect(c.service).toEqual([`meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : ${EP4} . 8080, 1 : 198.18.11.2 . 8080 }`]);
    expect(c.external!.at(-1)).toMatch(/^goto local-[A-Z2-7]{8}-ns\/solo\/tcp\/http$/);
  });

  it('internalTrafficPolicy Local: the local chain DNATs directly, and there is no service chain', () => {
    expect(chains({ internalTrafficPolicy: 'Local' }, [endpoint(EP4), endpoint('198.18.11.2', false)])).toEqual({
      local: [`meta l4proto tcp dnat to ${EP4}:8080`],
    });
  });

  it('ClientIP affinity keeps the endpoint chain, its timeout set and the numgen vmap', () => {
    const c = chains({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } } }, [endpoint(EP4)]);
    expect(c.service).toEqual([
      expect.stringMatching(/^ip saddr @affinity-[A-Z2-7]{8}-ns\/solo\/tcp\/http__198\.18\.10\.2\/8080 goto endpoint-[A-Z2-7]{8}-ns\/solo\/tcp\/http__198\.18\.10\.2\/8080$/),
      expect.stringMatching(/^numgen random mod 1 vmap \{ 0 : goto endpoint-[A-Z2-7]{8}-ns\/solo\/tcp\/http__198\.18\.10\.2\/8080 \}$/),
    ]);
    expect(c.endpoint).toEqual([expect.stringMatching(/^update @affinity-[A-Z2-7]{8}-ns\/solo\/tcp\/http__198\.18\.10\.2\/8080 \{ ip saddr \}$/), `meta l4proto tcp dnat to ${EP4}:8080`]);
  });

  it('two endpoints keep the numgen map', () => {
    expect(chains({}, [endpoint(EP4), endpoint('198.18.11.2')])).toEqual({
      service: [`meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : ${EP4} . 8080, 1 : 198.18.11.2 . 8080 }`],
    });
  });
});
