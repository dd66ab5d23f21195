// Broken objects mixed with good ones (test/fixtures/proxy/bad-input): every good service is
// programmed and reachable after the same sync, each bad object is logged once with its name and
// reason and counted, and the proxy keeps following changes.

import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probe, tally } from '../../../src/netns/cluster.js';
import { elementComment } from '../../../src/proxy/layout/names.js';
import { answered, proxyClusterFor, service, slice, type LogRecord } from './helpers.js';

const corpus = new URL('../../fixtures/proxy/bad-input', import.meta.url).pathname;
const LONG_NS = `${'n'.repeat(50)}-namespace-63`;
const LONG_NAME = `${'s'.repeat(52)}-service-63`;

/** The rejected objects of the corpus: what must be logged (once each) and why. */
const INVALID: { kind: string; object: string; reason: RegExp }[] = [
  { kind: 'Service', object: 'default/bad-ip', reason: /^spec\.clusterIPs\[0\]: "198\.18\.200\.999" is not an IP address/ },
  { kind: 'Service', object: 'default/bad-external-ip', reason: /^spec\.externalIPs\[0\]: "not-an-ip" is not an IP address/ },
  { kind: 'Service', object: 'default/port-zero', reason: /^spec\.ports\[0\]\.port: 0 is out of range/ },
  { kind: 'Service', object: 'default/port-70000', reason: /^spec\.ports\[0\]\.port: 70000 is out of range/ },
  { kind: 'Service', object: 'default/unknown-protocol', reason: /^spec\.ports\[0\]\.protocol: unsupported protocol "ICMP"/ },
  { kind: 'Service', object: 'default/duplicate-ports', reason: /^spec\.ports\[1\]: 80\/TCP duplicates spec\.ports\[0\]/ },
  { kind: 'EndpointSlice', object: 'default/mismatch-1', reason: /^endpoints\[0\]\.addresses\[0\]: "198\.18\.10\.2" is not an IPv6 address/ },
  { kind: 'EndpointSlice', object: 'default/no-addresses-1', reason: /^endpoints\[0\]\.addresses: empty/ },
];

describe('bad input', () => {
  const t = proxyClusterFor({
    pods: 3,
    prefix: 'nlp-bad',
    write: (dir) => {
      for (const f of readdirSync(corpus)) copyFileSync(join(corpus, f), join(dir.path, f));
    },
  });

  const invalidLogs = (records: LogRecord[]): LogRecord[] => records.filter((r) => r.msg === 'ignoring invalid object');
  const manifestLogs = (records: LogRecord[]): LogRecord[] => records.filter((r) => r.msg === 'cannot read object');

  it('programs every good service in the first sync', () => {
    const first = t.px.reports[0]!;
    expect(first.error).toBeUndefined();
    expect(first.results.every((r) => r.excluded === 0)).toBe(true);
    const a = probe(t.c.node, '198.18.200.80', 80, { count: 30 });
    expect(answered(a)).toHaveLength(30);
    expect(Object.keys(tally(a)).sort()).toEqual(['pod0', 'pod1', 'pod2']);
    expect(tally(probe(t.c.pods[0]!.ns, '198.18.200.81', 53, { proto: 'udp', count: 10, timeoutMs: 1000 }))).toEqual({ pod2: 10 });
  });

  it('programs the service with 63-character names, its element comment cut to 128 bytes', () => {
    expect(tally(probe(t.c.node, '198.18.200.82', 80, { count: 10 }))).toEqual({ pod1: 10 });
    // Its second port has no endpoints: refused, and listed with the (cut) comment.
    const refused = probe(t.c.node, '198.18.200.82', 81, { count: 3 });
    for (const a of refused.answers) expect(a).toBe('error:ECONNREFUSED');
    const full = `${LONG_NS}/${LONG_NAME}:very-long-port2`;
    expect(Buffer.byteLength(full)).toBeGreaterThan(128);
    const cut = elementComment({ namespace: LONG_NS, name: LONG_NAME, portName: 'very-long-port2' });
    expect(cut).toBe(full.slice(0, 128));
    const map = t.c.node.exec('nft', ['list', 'map', 'ip', 'kube-proxy', 'no-endpoint-services']);
    expect(map).toContain(`198.18.200.82 . tcp . 81 comment "${cut}" : goto reject-chain`);
  });

  it('refuses services whose only slice was rejected (they have no endpoints)', () => {
    for (const ip of ['198.18.200.88', '198.18.200.89']) {
      for (const a of probe(t.c.node, ip, 80, { count: 2 }).answers) expect(a, ip).toBe('error:ECONNREFUSED');
    }
  });

  it('logs each rejected object once, with its name and reason, and counts it', () => {
    const logs = invalidLogs(t.px.log.records);
    for (const want of INVALID) {
      const mine = logs.filter((r) => r.fields.kind === want.kind && r.fields.object === want.object);
      expect(mine, `${want.kind} ${want.object}`).toHaveLength(1);
      expect(mine[0]!.level).toBe('error');
      expect(String(mine[0]!.fields.reason)).toMatch(want.reason);
    }
    expect(logs).toHaveLength(INVALID.length);
    const unreadable = manifestLogs(t.px.log.records);
    expect(unreadable).toHaveLength(1);
    expect(String(unreadable[0]!.fields.origin)).toContain('broken.yaml');
    expect(String(unreadable[0]!.fields.reason)).toMatch(/^not valid YAML: /);
    expect(Object.fromEntries(t.px.proxier.invalidCounts)).toEqual({ Service: 6, EndpointSlice: 2, Manifest: 1 });
  });

  it('keeps running: a later good change syncs, and nothing is logged again', async () => {
    const synced = t.px.nextSync();
    t.dir.write('good-c', service({ name: 'good-c', clusterIPs: ['198.18.200.90'] }), slice({ service: 'good-c', endpoints: [t.c.pods[0]!.ipv4] }));
    const report = await synced;
    expect(report.error).toBeUndefined();
    expect(tally(probe(t.c.node, '198.18.200.90', 80, { count: 10 }))).toEqual({ pod0: 10 });
    expect(invalidLogs(t.px.log.records)).toHaveLength(INVALID.length);
    expect(manifestLogs(t.px.log.records)).toHaveLength(1);
    expect(Object.fromEntries(t.px.proxier.invalidCounts)).toEqual({ Service: 6, EndpointSlice: 2, Manifest: 1 });
    // The good services of the first sync still answer.
    expect(answered(probe(t.c.node, '198.18.200.80', 80, { count: 5 }))).toHaveLength(5);
  });
});
