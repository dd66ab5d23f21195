// The conntrack settings of a KubeProxyConfiguration are applied to the namespace the proxy runs in.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { conntrackSettings } from '../../../src/proxy/conntrack/sysctls.js';
import { defaultKubeProxyConfig } from '../../../src/config/kube-proxy-config.js';
import { namespacesForFile } from '../../helpers/netns.js';
import { BIN as bin } from '../../../src/netns/proxy-process.js';

const manifests = new URL('../../fixtures/proxy/basic', import.meta.url).pathname;
const ns = namespacesForFile(afterAll);
const dir = mkdtempSync(join(tmpdir(), 'nftlink-ctsys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('sets the TCP and UDP timeouts in the proxy\'s namespace, and never lowers nf_conntrack_max', () => {
  const node = ns();
  const read = (name: string): number => Number(node.exec('cat', [`/proc/sys/net/netfilter/${name}`]).trim());
  const maxBefore = read('nf_conntrack_max');
  writeFileSync(join(dir, 'config.conf'), 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nconntrack:\n  udpTimeout: 45s\n  udpStreamTimeout: 150s\n  tcpEstablishedTimeout: 2h0m0s\n  tcpCloseWaitTimeout: 1m0s\n  maxPerCore: 1\n  min: 1\n');
  node.exec(process.execPath, [bin, 'proxy', '--once', '--config', join(dir, 'config.conf'), '--manifests', manifests, '--node-ip', '198.18.0.1']);
  expect(read('nf_conntrack_udp_timeout')).toBe(45);
  expect(read('nf_conntrack_udp_timeout_stream')).toBe(150);
  expect(read('nf_conntrack_tcp_timeout_established')).toBe(7200);
  expect(read('nf_conntrack_tcp_timeout_close_wait')).toBe(60);
  expect(read('nf_conntrack_max')).toBe(maxBefore);
});

it("kube-proxy's --conntrack-* flags do the same, and --init-only stops after that set-up", () => {
  const node = ns();
  const read = (name: string): number => Number(node.exec('cat', [`/proc/sys/net/netfilter/${name}`]).trim());
  node.exec(process.execPath, [bin, 'proxy', '--init-only', '--conntrack-udp-timeout=33s', '--conntrack-tcp-timeout-close-wait=90s', '--conntrack-max-per-core=0', '--manifests', manifests, '--node-ip', '198.18.0.1']);
  expect(read('nf_conntrack_udp_timeout')).toBe(33);
  expect(read('nf_conntrack_tcp_timeout_close_wait')).toBe(90);
  expect(node.exec('nft', ['list', 'tables']).trim()).toBe('');
});

it('computes kube-proxy\'s table size: maxPerCore x CPUs, at least min; 0 leaves values alone', () => {
  const c = { ...defaultKubeProxyConfig().conntrack, maxPerCore: 32768, min: 131072, tcpEstablishedTimeoutMs: 0, tcpCloseWaitTimeoutMs: 0 };
  expect(conntrackSettings(c, 2)).toEqual([{ sysctl: 'nf_conntrack_max', value: 131072 }]);
  expect(conntrackSettings(c, 8)).toEqual([{ sysctl: 'nf_conntrack_max', value: 262144 }]);
  expect(conntrackSettings({ ...c, maxPerCore: 0 }, 8)).toEqual([]);
});
