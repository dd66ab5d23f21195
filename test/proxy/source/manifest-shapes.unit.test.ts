// Structurally malformed objects in manifest files (a string where a list belongs, an object where a
// list belongs, ...): each used to stop the whole sync with a TypeError ("(list ?? []).forEach is
// not a function"), programming nothing. Now each is refused alone, with one problem naming the
// object, the file and the field, and every other object of the file is programmed.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';
import type { SourceProblem } from '../../../src/proxy/source/source.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nftlink-shapes-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const service = (name: string, ip: string, spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { clusterIP: ip, ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec },
  status,
});

const slice = (name: string, svc: string, ip: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
  addressType: 'IPv4',
  endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  ...extra,
});

/** Reads `objects` (in one JSON List file) through the manifest source into a tracker; returns what is programmed. */
async function programOnce(objects: unknown[]): Promise<{ programmed: Map<string, string[]>; problems: SourceProblem[] }> {
  await writeFile(join(dir, 'objects.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const tracker = new ChangeTracker({ nodeName: 'node-a' });
  const problems: SourceProblem[] = [];
  const source = new ManifestSource(dir, { watch: false });
  await source.start({
    service: (t, s) => tracker.service(t, s),
    endpointSlice: (t, s) => tracker.endpointSlice(t, s),
    synced: () => {},
    problem: (p) => problems.push(p),
  });
  await source.stop();
  const snap = tracker.snapshot();
  const programmed = new Map<string, string[]>();
  for (const [id, eps] of snap.states.ipv4.endpoints) programmed.set(id, eps.map((e) => `${e.ip}:${e.port}`));
  return { programmed, problems };
}

// One case per TypeError seen from a generator of mutated manifests, with the field that caused it.
const cases: { error: string; bad: unknown; reason: RegExp; ref: string }[] = [
  {
    error: '(list ?? []).forEach is not a function',
    bad: service('bad', '198.18.0.20', { externalIPs: '198.18.0.21' }),
    ref: 'Service default/bad',
    reason: /spec\.externalIPs: expected array/,
  },
  {
    error: '(slice.ports ?? []).map is not a function',
    bad: slice('bad-1', 'bad', '198.19.0.20', { ports: { name: 'http', port: 8080 } }),
    ref: 'EndpointSlice default/bad-1',
    reason: /ports: expected array or null/,
  },
  {
    error: 'ports.map is not a function',
    bad: service('bad', '198.18.0.20', { ports: '80' }),
    ref: 'Service default/bad',
    reason: /spec\.ports: expected array/,
  },
  {
    error: '(spec.ipFamilies ?? []).map is not a function',
    bad: service('bad', '198.18.0.20', { ipFamilies: 'IPv4' }),
    ref: 'Service default/bad',
    reason: /spec\.ipFamilies: expected array/,
  },
  {
    error: 'addresses.map is not a function',
    bad: slice('bad-1', 'bad', '198.19.0.20', { endpoints: [{ addresses: '198.19.0.20' }] }),
    ref: 'EndpointSlice default/bad-1',
    reason: /endpoints\[0\]\.addresses: expected array/,
  },
  {
    error: '(slice.endpoints ?? []).map is not a function',
    bad: slice('bad-1', 'bad', '198.19.0.20', { endpoints: { addresses: ['198.19.0.20'] } }),
    ref: 'EndpointSlice default/bad-1',
    reason: /endpoints: expected array or null/,
  },
  {
    error: '(ingress ?? []).forEach is not a function',
    bad: service('bad', '198.18.0.20', { type: 'LoadBalancer' }, { loadBalancer: { ingress: { ip: '198.18.0.30' } } }),
    ref: 'Service default/bad',
    reason: /status\.loadBalancer\.ingress: expected array/,
  },
  {
    error: 'a port given as text',
    bad: service('bad', '198.18.0.20', { ports: [{ name: 'http', port: '80' }] }),
    ref: 'Service default/bad',
    reason: /spec\.ports\[0\]\.port: expected integer, not string/,
  },
];

describe('a structurally malformed object is refused alone', () => {
  for (const c of cases) {
    it(`${c.error}: refused naming the object, the file and the field; the others programmed`, async () => {
      const good = [service('web', '198.18.0.10'), slice('web-1', 'web', '198.19.0.10'), service('api', '198.18.0.11'), slice('api-1', 'api', '198.19.0.11')];
      const { programmed, problems } = await programOnce([good[0], good[1], c.bad, good[2], good[3]]);
      expect(programmed.get('default/web:http')).toEqual(['198.19.0.10:8080']);
      expect(programmed.get('default/api:http')).toEqual(['198.19.0.11:8080']);
      expect(problems).toHaveLength(1);
      const [p] = problems;
      expect(p!.origin).toContain(c.ref);
      expect(p!.origin).toContain(join(dir, 'objects.json'));
      expect(p!.reason).toMatch(c.reason);
    });
  }

  it('a NUL byte, or quotes and a newline, in a name that reaches a chain name: refused, printed escaped', async () => {
    const nulPort = service('nul', '198.18.0.20', { ports: [{ name: 'ht\u0000tp', port: 80 }] });
    const quoted = service('quoted', '198.18.0.21', { ports: [{ name: 'a"\nb', port: 80 }] });
    const badName = { ...service('x', '198.18.0.22'), metadata: { name: 'we"b\n', namespace: 'default' } };
    const badSlicePort = slice('web-2', 'web', '198.19.0.12', { ports: [{ name: 'h"\n', port: 8080 }] });
    const { programmed, problems } = await programOnce([service('web', '198.18.0.10'), slice('web-1', 'web', '198.19.0.10'), nulPort, quoted, badName, badSlicePort]);
    expect(programmed.get('default/web:http')).toEqual(['198.19.0.10:8080']);
    expect([...programmed.keys()]).toEqual(['default/web:http']);
    expect(problems.map((p) => p.reason)).toEqual([
      expect.stringMatching(/^spec\.ports\[0\]\.name: "ht\\u0000tp" is not empty or a DNS-1123 label/),
      expect.stringMatching(/^spec\.ports\[0\]\.name: "a\\"\\nb" is not empty or a DNS-1123 label/),
      expect.stringMatching(/^metadata\.name: "we\\"b\\n" is not a DNS-1035 label/),
      expect.stringMatching(/^ports\[0\]\.name: "h\\"\\n" is not empty or a DNS-1123 label/),
    ]);
    // Every line a log would carry is printable: the bad characters are escaped.
    for (const p of problems) expect(`${p.origin} ${p.reason}`).toMatch(/^[\x20-\x7e]*$/);
  });
});
