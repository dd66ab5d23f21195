// Issue 31's reproduction, end to end: a generator of manifest files (150 files of 20 Services and
// their 20 EndpointSlices, about half of them with one field given a value of the wrong type) made
// `nftlink proxy --once --manifests DIR` exit 1 with a TypeError, programming nothing. Now it exits
// 0, every good Service is in the ruleset, and each refused object is one log line naming it, its
// file and its field.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { BIN as bin } from '../../../src/netns/proxy-process.js';
import { namespacesForFile } from '../../helpers/netns.js';
import { TEST_LAYOUT } from '../dataplane/helpers.js';

const ns = namespacesForFile(afterAll);
const dir = mkdtempSync(join(tmpdir(), 'nftlink-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A fixed pseudo-random sequence: the same files on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const WRONG: Json[] = ['80', 80, { a: 1 }, ['x'], null, true, 'IPv4'];

/** Gives one field below the top level (never kind, apiVersion or metadata itself) a value of another kind. */
function mutate(obj: { [k: string]: Json }, rnd: () => number): void {
  const paths: (string | number)[][] = [];
  const walk = (v: Json, p: (string | number)[]): void => {
    if (p.length && !(p.length === 1 && ['kind', 'apiVersion', 'metadata'].includes(String(p[0])))) paths.push(p);
    if (Array.isArray(v)) v.forEach((c, i) => walk(c, [...p, i]));
    else if (v !== null && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...p, k]);
  };
  walk(obj, []);
  const path = paths[Math.floor(rnd() * paths.length)]!;
  let at = obj as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, Json>;
  at[path.at(-1)!] = WRONG[Math.floor(rnd() * WRONG.length)]!;
}

it('proxy --once over 150 files with about half the objects malformed: exit 0, every good Service programmed', () => {
  const rnd = random(31);
  const good: string[] = [];
  for (let f = 0; f < 150; f++) {
    const items: Json[] = [];
    for (let i = 0; i < 20; i++) {
      const n = f * 20 + i;
      const name = `svc-${n}`;
      const ip = `198.18.${n >> 8}.${n & 255}`;
      const svc: { [k: string]: Json } = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { type: 'ClusterIP', clusterIP: ip, ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }], externalIPs: [], loadBalancerSourceRanges: [] },
        status: { loadBalancer: { ingress: [] } },
      };
      const slice: { [k: string]: Json } = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-a`, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [`198.19.${n >> 8}.${n & 255}`], conditions: { ready: true } }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      };
      if (rnd() < 0.5) mutate(svc, rnd);
      else good.push(ip);
      if (rnd() < 0.5) mutate(slice, rnd);
      items.push(svc, slice);
    }
    writeFileSync(join(dir, `f${f}.json`), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  }
  const netns = ns();
  const r = spawnSync(process.execPath, [bin, 'proxy', '--once', '--manifests', dir, '--netns', netns.name, '--node-ip', '198.18.255.1', '--layout', TEST_LAYOUT, '--healthz-bind-address', '', '--metrics-bind-address', ''], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(r.status, r.stderr.slice(-2000)).toBe(0);
  expect(r.stderr).not.toMatch(/TypeError|sync failed/);

  const ruleset = netns.exec('nft', ['list', 'ruleset']);
  const missing = good.filter((ip) => !ruleset.includes(`${ip} . tcp . 80`));
  expect(missing).toEqual([]);
  expect(good.length).toBeGreaterThan(1000);

  // Each shape refusal: one line, naming the object and its file, with a field path and a reason.
  const refusals = r.stderr
    .split('\n')
    .filter((l) => l.includes('"msg":"cannot read object"'))
    .map((l) => JSON.parse(l) as { origin: string; reason: string });
  expect(refusals.length).toBeGreaterThan(1000);
  for (const p of refusals) {
    expect(p.origin).toMatch(new RegExp(`^((Service|EndpointSlice) \\S+ in )?${dir}/f[0-9]+\\.json items\\[[0-9]+\\]$`));
    expect(p.reason).toMatch(/^[A-Za-z][\w.[\]"/-]*: \S|without metadata\.name| is already defined in /);
  }
  // No object is reported twice.
  expect(new Set(refusals.map((p) => p.origin)).size).toBe(refusals.length);
}, 120_000);

it('a long-running proxy whose manifests cannot be read at start-up exits 1 naming the file, rather than serving healthz 200 with nothing programmed', () => {
  const unreadable = mkdtempSync(join(tmpdir(), 'nftlink-unreadable-'));
  try {
    writeFileSync(join(unreadable, 'a.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ port: 80 }] } }));
    symlinkSync('loop.yaml', join(unreadable, 'loop.yaml')); // stat: ELOOP, a read that fails
    const netns = ns();
    const r = spawnSync(process.execPath, [bin, 'proxy', '--manifests', unreadable, '--netns', netns.name, '--node-ip', '198.18.255.1', '--layout', TEST_LAYOUT, '--healthz-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.signal, 'still running after 30 s').toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot read ${join(unreadable, 'loop.yaml')}: ELOOP`);
  } finally {
    rmSync(unreadable, { recursive: true, force: true });
  }
}, 60_000);

/** `nftlink proxy --once` over `files` (name -> objects) in `netns`; its stderr. */
function runOnce(netns: { name: string }, files: Record<string, Json[]>): string {
  const manifests = mkdtempSync(join(tmpdir(), 'nftlink-once-files-'));
  try {
    for (const [name, items] of Object.entries(files)) writeFileSync(join(manifests, name), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const r = spawnSync(process.execPath, [bin, 'proxy', '--once', '--manifests', manifests, '--netns', netns.name, '--node-ip', '198.18.255.1', '--layout', TEST_LAYOUT, '--healthz-bind-address', '', '--metrics-bind-address', ''], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    return r.stderr;
  } finally {
    rmSync(manifests, { recursive: true, force: true });
  }
}

const svcWithSlice = (name: string, clusterIP: string, endpoint: string, created?: string, portName = 'http'): Json[] => [
  { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default', ...(created ? { creationTimestamp: created } : {}) }, spec: { clusterIP, ports: [{ name: portName, port: 80, protocol: 'TCP' }] } },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-a`, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [endpoint], conditions: { ready: true } }],
    ports: [{ name: portName, port: 8080, protocol: 'TCP' }],
  },
];

it('duplicate ClusterIPs: the older Service is programmed, also after a restart that reads the objects in the other order', () => {
  const netns = ns();
  const older = svcWithSlice('zed', '198.18.0.10', '198.19.0.1', '2026-01-01T00:00:00Z');
  const newer = svcWithSlice('abe', '198.18.0.10', '198.19.0.2', '2026-06-01T00:00:00Z');
  // The endpoint the ClusterIP leads to, by its address in the ruleset.
  const winner = (): string[] => ['198.19.0.1', '198.19.0.2'].filter((ip) => netns.exec('nft', ['list', 'ruleset']).includes(ip));
  const first = runOnce(netns, { 'a.json': older, 'b.json': newer });
  expect(winner()).toEqual(['198.19.0.1']);
  expect(first).toContain('spec.clusterIP: 198.18.0.10 port 80/TCP is also claimed by Service default/zed');
  // The restart reads the newer one first.
  runOnce(netns, { 'a.json': newer, 'b.json': older });
  expect(winner()).toEqual(['198.19.0.1']);
}, 60_000);

it('a NUL byte or quotes and a newline in a port name refuse that Service alone: the others are programmed, and the ruleset reads back with nft -f', () => {
  const netns = ns();
  const stderr = runOnce(netns, {
    'a.json': [...svcWithSlice('web', '198.18.0.20', '198.19.0.20'), ...svcWithSlice('nul', '198.18.0.21', '198.19.0.21', undefined, 'ht\u0000tp'), ...svcWithSlice('quoted', '198.18.0.22', '198.19.0.22', undefined, 'a"\nb')],
  });
  const ruleset = netns.exec('nft', ['list', 'ruleset']);
  expect(ruleset).toContain('198.19.0.20');
  expect(ruleset).not.toContain('198.18.0.21');
  expect(ruleset).not.toContain('198.18.0.22');
  expect(stderr).toContain('spec.ports[0].name: \\"ht\\\\u0000tp\\" is not empty or a DNS-1123 label');
  // What nft prints, nft reads back (a check run: nothing is changed).
  netns.exec('nft', ['-c', '-f', '-'], ruleset);
}, 60_000);
