// The pre-1.36 kube-proxy ruleset that the takeover test loads (kube-proxy-ruleset.ts) is
// upstream's own: for upstream's fixtures, on upstream's addresses, it equals the goldens of
// proxier_test.go (test/fixtures/proxy/upstream/), normalised as the conformance test does.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { modelLines, parseTable } from '../layout/upstream/nft-model.js';
import { oldKubeProxyRuleset, type OldServicePort } from './kube-proxy-ruleset.js';

const DIR = new URL('../../fixtures/proxy/upstream/', import.meta.url).pathname;
const golden = (file: string, without?: RegExp): string[] => {
  const text = readFileSync(DIR + 'base.nft', 'utf8') + readFileSync(DIR + file, 'utf8');
  return modelLines(parseTable(without ? text.split('\n').filter((l) => !without.test(l)).join('\n') : text));
};
const generated = (ports: OldServicePort[]): string[] =>
  modelLines(parseTable(oldKubeProxyRuleset({ podCIDR: '10.0.0.0/8', serviceCIDR: '172.30.0.0/16', nodeIP: '192.168.0.2' }, ports)));

const cip = (ns: string, ip: string, portName: string, port: number, eps: string[], extra: Partial<OldServicePort> = {}): OldServicePort => ({
  namespace: ns,
  name: ns.replace('ns', 'svc'),
  portName,
  clusterIP: ip,
  port,
  endpoints: eps.map((e) => ({ ip: e, port, local: false })),
  ...extra,
});

describe('the pre-1.36 kube-proxy ruleset for the takeover test', () => {
  it('is TestSyncProxyRulesStartup\'s golden for its fixtures (two endpoints, one service without)', () => {
    expect(generated([cip('ns1', '172.30.0.41', 'p80', 80, ['10.0.1.1', '10.0.1.2']), cip('ns2', '172.30.0.42', 'p8080', 8080, ['10.0.2.1']), cip('ns3', '172.30.0.43', 'p80', 80, [])])).toEqual(
      golden('startup/upstream.nft'),
    );
  });

  it('is TestOverallNFTablesRules\' golden for its fixtures, less the load balancer with source ranges', () => {
    const ports: OldServicePort[] = [
      cip('ns1', '172.30.0.41', 'p80', 80, ['10.180.0.1']),
      // The load balancer IP 1.2.3.4 takes the same rules and elements as an external IP.
      cip('ns2', '172.30.0.42', 'p80', 80, ['10.180.0.2'], { nodePort: 3001, externalIPs: ['192.168.99.22', '1.2.3.4'], externalTrafficPolicy: 'Local' }),
      cip('ns3', '172.30.0.43', 'p80', 80, ['10.180.0.3'], { nodePort: 3003 }),
      cip('ns4', '172.30.0.44', 'p80', 80, ['10.180.0.4', '10.180.0.5'], { externalIPs: ['192.168.99.33'] }),
      cip('ns6', '172.30.0.46', 'p80', 80, []),
    ];
    expect(generated(ports)).toEqual(golden('overall/upstream.nft', /svc5|HVFWP5L3|GTK6MW7G|5\.6\.7\.8|172\.30\.0\.45/));
  });
});
