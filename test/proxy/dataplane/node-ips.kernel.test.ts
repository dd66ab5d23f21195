// Without --node-ip the proxy finds this node's IPs as kube-proxy does: the Node's InternalIP (one
// per family), replaced by a specific --bind-address, else loopback. NodePorts are then taken on the
// primary IP only (nodePortAddresses' default, "primary"), in the namespace the proxy programs.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { namespacesForFile } from '../../helpers/netns.js';
import { BIN as bin, ProxyProcess } from '../../../src/netns/proxy-process.js';
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

  it("exits, to be restarted, when the Node's IPs change after they were read", async () => {
    const netns = ns();
    const dir = mkdtempSync(join(tmpdir(), 'nftlink-nodeips-'));
    dirs.push(dir);
    const write = (ip: string): void => writeFileSync(join(dir, 'node.json'), JSON.stringify({ ...nodeY, status: { addresses: [{ type: 'InternalIP', address: ip }] } }));
    write('198.18.0.7');
    const px = ProxyProcess.startHere(['--manifests', dir, '--netns', netns.name, '--hostname-override', 'node-y', '--layout', TEST_LAYOUT, '--min-sync-period', '100ms', '--healthz-bind-address', '', '--metrics-bind-address', '']);
    try {
      // Programmed: the Node's IP takes NodePorts.
      const programmed = (): boolean => {
        try {
          return netns.exec('nft', ['list', 'set', 'ip', 'kube-proxy', 'nodeport-ips']).includes('198.18.0.7');
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 15_000;
      while (!programmed() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(programmed(), px.raw).toBe(true);
      write('198.18.0.8');
      const exit = await Promise.race([px.exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
      expect(exit?.code, px.raw).toBe(1);
      expect(px.raw).toContain("the node's IPs changed");
    } finally {
      await px.stop();
    }
  });
});
