// detectLocalMode NodeCIDR: the pod CIDRs that count as local are this Node's spec.podCIDRs. The
// proxy waits for the Node object before its first sync, then masquerades traffic from outside them.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { namespacesForFile } from '../../helpers/netns.js';
import { BIN as bin } from '../../../src/netns/proxy-process.js';
import { service, slice } from './helpers.js';

const ns = namespacesForFile(afterAll);
const dir = mkdtempSync(join(tmpdir(), 'nftlink-nodecidr-'));
const configDir = mkdtempSync(join(tmpdir(), 'nftlink-nodecidr-config-'));
afterAll(() => [dir, configDir].forEach((d) => rmSync(d, { recursive: true, force: true })));

it('uses the Node object\'s podCIDRs as the local CIDRs', () => {
  const node = ns();
  const objects = [
    { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-x' }, spec: { podCIDRs: ['198.18.64.0/24', '2001:db8:64::/64'] } },
    service({ name: 'web', clusterIPs: ['198.18.200.50'] }),
    slice({ service: 'web', endpoints: [{ ip: '198.18.64.5', nodeName: 'node-x' }] }),
  ];
  writeFileSync(join(dir, 'all.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  // clusterCIDR is set too, to show that NodeCIDR mode does not use it.
  const config = join(configDir, 'config.conf');
  writeFileSync(config, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\ndetectLocalMode: NodeCIDR\nhostnameOverride: node-x\nclusterCIDR: 198.19.0.0/16\n');
  const r = spawnSync(process.execPath, [bin, 'proxy', '--once', '--config', config, '--manifests', dir, '--netns', node.name, '--node-ip', '198.18.0.1'], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const services = node.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', 'services']);
  expect(services).toContain('ip saddr != 198.18.64.0/24');
  expect(services).not.toContain('198.19.0.0/16');
  expect(node.exec('nft', ['list', 'chain', 'ip6', 'kube-proxy', 'services'])).toContain('ip6 saddr != 2001:db8:64::/64');
});
