// What the proxy takes from its Node (src/cli/node-watch.ts), and the restart policy: a change of
// the Node's IPs, or of its podCIDRs with detectLocalMode NodeCIDR, after they were used ends the
// process (exit 1, with an error line), as kube-proxy's NodeManager and NodePodCIDRHandler do.

import { describe, expect, it } from 'vitest';
import { NodeWatch } from '../../src/cli/node-watch.js';
import { defaultKubeProxyConfig, type KubeProxyConfig } from '../../src/config/kube-proxy-config.js';
import { settingsFromConfig } from '../../src/config/proxy-settings.js';
import type { Node } from '../../src/k8s/objects.js';
import type { LogFields, Logger } from '../../src/logging/logger.js';

const node = (ip: string, podCIDRs: string[] = []): Node => ({
  metadata: { name: 'n1' },
  spec: { podCIDRs },
  status: { addresses: [{ type: 'InternalIP', address: ip }] },
});

function watch(cfg: KubeProxyConfig, nodeIPs: string[] = []) {
  const errors: [string, LogFields | undefined][] = [];
  const exits: number[] = [];
  const log: Logger = { error: (msg, fields) => errors.push([msg, fields]), warn: () => {}, info: () => {}, debug: () => {} };
  const settings = settingsFromConfig(cfg, { table: 'kube-proxy', layout: 'slots', nodeIPs, serviceCIDRs: [], localhostNodePorts: false });
  const w = new NodeWatch({ cfg, settings, interfaceAddresses: undefined, log, exit: (code) => exits.push(code) });
  return { w, errors, exits };
}

describe('NodeWatch', () => {
  it("reads the node IPs at the first sync and exits when the Node's IPs change afterwards", () => {
    const { w, errors, exits } = watch(defaultKubeProxyConfig());
    w.nodeChanged(node('198.18.0.7'));
    expect(w.families()!.find((f) => f.family === 'ipv4')!.nodeIPs).toEqual(['198.18.0.7']);
    w.nodeChanged(node('198.18.0.7'));
    expect(exits).toEqual([]);
    w.nodeChanged(node('198.18.0.8'));
    expect(exits).toEqual([1]);
    expect(errors).toEqual([["the node's IPs changed; exiting so that the proxy restarts with them", { before: ['198.18.0.7'], now: ['198.18.0.8'] }]]);
  });

  it('keeps --node-ip whatever the Node says', () => {
    const { w, exits } = watch(defaultKubeProxyConfig(), ['198.18.0.1']);
    w.nodeChanged(node('198.18.0.7'));
    expect(w.families()!.find((f) => f.family === 'ipv4')!.nodeIPs).toEqual(['198.18.0.1']);
    w.nodeChanged(node('198.18.0.8'));
    expect(exits).toEqual([]);
  });

  it('NodeCIDR: waits for the podCIDRs, then exits when they change', () => {
    const { w, errors, exits } = watch({ ...defaultKubeProxyConfig(), detectLocalMode: 'NodeCIDR' }, ['198.18.0.1']);
    expect(w.families()).toBeUndefined();
    w.nodeChanged(node('198.18.0.1', ['198.19.1.0/24']));
    expect(w.families()!.find((f) => f.family === 'ipv4')!.clusterCIDRs).toEqual(['198.19.1.0/24']);
    w.nodeChanged(node('198.18.0.1', ['198.19.1.0/24']));
    expect(exits).toEqual([]);
    w.nodeChanged(node('198.18.0.1', ['198.19.2.0/24']));
    expect(exits).toEqual([1]);
    expect(errors[0]![0]).toBe("the node's podCIDRs changed; exiting so that the proxy restarts with them");
  });
});
