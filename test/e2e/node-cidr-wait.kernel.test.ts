// detectLocalMode NodeCIDR against a (fake) API server: the proxy waits for its Node's podCIDRs
// before its first sync, and programs the moment the Node's watch event brings them, not at the next
// periodic sync (10 minutes here, so only the Node's event can start it within the test).

import { afterAll, beforeAll, expect, it } from 'vitest';
import { Netns } from '../helpers/netns.js';
import { service, slice } from '../proxy/dataplane/helpers.js';
import { ApiServer, NODE, ProxyFiles, ProxyProcess, tables, tearDown, until } from './harness.js';

let ns: Netns;
let files: ProxyFiles;
let api: ApiServer;
let proxy: ProxyProcess;

beforeAll(async () => {
  ns = Netns.create('nle2en');
  files = new ProxyFiles();
  api = await ApiServer.start(ns);
  await api.upsert('nodes', NODE);
  await api.upsert('services', service({ name: 'web', clusterIPs: ['198.18.200.52'] }));
  await api.upsert('endpointslices', slice({ service: 'web', endpoints: [{ ip: '198.18.66.5', nodeName: 'node' }] }));
}, 30_000);

afterAll(async () => {
  await tearDown({ proxy, api, files });
  ns?.remove();
});

it("waits for the Node's podCIDRs, then programs as soon as the Node's update arrives", async () => {
  proxy = ProxyProcess.start(ns, ['--config', files.config({ detectLocalMode: 'NodeCIDR', syncPeriod: '10m' }), '--node-ip', '198.18.0.1']);
  await until('the proxy waiting for podCIDRs', () => proxy.logs("not syncing yet: waiting for this node's podCIDRs (detectLocalMode NodeCIDR)").length > 0, 15_000, () => proxy.raw);
  expect(tables(ns).filter((t) => t.includes('kube-proxy'))).toEqual([]);
  await api.upsert('nodes', { ...NODE, spec: { podCIDRs: ['198.18.66.0/24'] } });
  await until('the first sync', () => tables(ns).includes('ip kube-proxy'), 10_000, () => proxy.raw);
  expect(ns.exec('nft', ['list', 'chain', 'ip', 'kube-proxy', 'services'])).toContain('ip saddr != 198.18.66.0/24');
}, 40_000);
