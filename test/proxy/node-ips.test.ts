// Without --node-ip the proxy finds this node's IPs as kube-proxy does: the Node's InternalIP (one
// per family), replaced by a specific --bind-address, else loopback. NodePorts are then taken on the
// primary IP only (nodePortAddresses' default, "primary"), in the namespace the proxy programs.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { namespacesForFile } from '../helpers/netns.js';
import { BIN as bin } from '../../src/netns/proxy-process.js';
import { service, slice, TEST_LAYOUT } from './helpers.js';

const ns = namespacesForFile(afterAll);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs `proxy --once` on manifests (a NodePort service, and `node` if given) in a fresh namespace; returns its nodeport-ips and stderr. */
function programmed(node: object | undefined, flags: string[] = []): { ips: string; stderr: string } {
  const netns = ns();
  const dir = mkdtempSync(join(tmpdir(), 'nftlink-nodeips-'));
  dirs.push(dir);
  const objects = [
    ...(node ? [node] : []),
    service({ name: 'web', type: 'NodePort', clusterIPs: ['198.18.200.60'], ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30090 }] }),
    slice({ service: 'web', endpoints: [{ ip: '198.18.64.5' }] }),
  ];
  writeFileSync(join(dir, 'all.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const r = spawnSync(process.execPath, [bin, 'proxy', '--once', '--manifests', dir, '--netns', netns.name, '--hostname-override', 'node-y', '--layout', TEST_LAYOUT, ...flags], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return { ips: netns.exec('nft', ['list', 'set', 'ip', 'kube-proxy', 'nodeport-ips']), stderr: r.stderr };
}

const nodeY = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-y' }, status: { addresses: [{ type: 'Hostname', address: 'node-y' }, { type: 'ExternalIP', address: '198.19.9.9' }, { type: 'InternalIP', address: '198.18.0.7' }] } };

describe('node IPs without --node-ip', () => {
  it("takes NodePorts on the Node's InternalIP", () => {
    const { ips, stderr } = programmed(nodeY);
    expect(ips).toMatch(/elements = \{ 198\.18\.0\.7 \}/);
    expect(stderr).toContain('"source":"node"');
  });

  it('lets a specific --bind-address be the primary IP', () => {
    expect(programmed(nodeY, ['--bind-address', '198.18.0.9']).ips).toMatch(/elements = \{ 198\.18\.0\.9 \}/);
  });

  it('assumes loopback, with a warning, when the Node has no addresses, and then takes NodePorts on no address', () => {
    const { ips, stderr } = programmed({ ...nodeY, status: {} });
    expect(ips).not.toContain('elements');
    expect(stderr).toContain('assuming loopback');
  });
});
