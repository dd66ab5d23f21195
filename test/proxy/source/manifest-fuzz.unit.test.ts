// Property-based: generated Services and EndpointSlices, good ones and ones with one field replaced
// by a value of any type (or removed), fed through the manifest source into the change tracker.
// Whatever the mix: nothing throws; every object is either delivered or refused by a problem that
// names it; every good object is delivered and programmed. Sized for CI (a few seconds).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';
import type { SourceProblem } from '../../../src/proxy/source/source.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nftlink-fuzz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const portName = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
const octet = fc.integer({ min: 1, max: 254 });

/** A valid Service number i (its name unique by i) with 1-3 ports, and its slice. */
const goodPair = (i: number) =>
  fc
    .record({
      ports: fc.uniqueArray(fc.record({ name: portName, port: fc.integer({ min: 1, max: 65535 }), protocol: fc.constantFrom('TCP', 'UDP', 'SCTP') }), {
        minLength: 1,
        maxLength: 3,
        selector: (p) => p.name,
      }),
      endpoints: fc.uniqueArray(octet, { minLength: 0, maxLength: 4 }),
      ready: fc.boolean(),
    })
    .map(({ ports: drawn, endpoints, ready }) => {
      const name = `svc-${i}`;
      // Port numbers apart by index: two ports of one number and protocol would be a (semantic) duplicate.
      const ports = drawn.map((p, j) => ({ ...p, port: 1 + j * 20000 + (p.port % 20000) }));
      const service: Json = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'fuzz', labels: { app: name } },
        spec: { clusterIP: `198.18.${i}.1`, ports: ports.map((p) => ({ ...p, targetPort: p.port })) },
      };
      const slice: Json = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-abc`, namespace: 'fuzz', labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        endpoints: endpoints.map((o) => ({ addresses: [`198.19.${i}.${o}`], conditions: { ready } })),
        ports: ports.map((p) => ({ name: p.name, port: 8000 + (p.port % 1000), protocol: p.protocol })),
      };
      return [service, slice];
    });

/** Any JSON value, of any type: what a broken generator or a hand edit might put anywhere. */
const anyValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('', '\u0000', 'a"\nb', '198.18.0.1', 'TCP', 'IPv4', '80'),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), { maxKeys: 2 }),
);

/** Every path to a value inside `v`, except kind and apiVersion (another kind is ignored, not refused). */
function paths(v: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = prefix.length ? [prefix] : [];
  if (Array.isArray(v)) v.forEach((c, i) => out.push(...paths(c, [...prefix, i])));
  else if (v !== null && typeof v === 'object') {
    for (const [k, c] of Object.entries(v)) if (!(prefix.length === 0 && (k === 'kind' || k === 'apiVersion'))) out.push(...paths(c, [...prefix, k]));
  }
  return out;
}

/** `v` with the value at one of its paths replaced (or removed, when `value` is undefined). */
function mutate(v: Json, pick: number, value: Json | undefined): Json {
  const copy = structuredClone(v);
  const all = paths(copy);
  const path = all[pick % all.length]!;
  let parent = copy as Record<string | number, Json>;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, Json>;
  const last = path.at(-1)!;
  if (value === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = value ?? null;
  return copy;
}

const mutation = fc.record({ pick: fc.nat(), value: fc.option(anyValue, { nil: undefined }) });

const scenario = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc.record({
    pairs: fc.tuple(...Array.from({ length: n }, (_, i) => goodPair(i + 1))),
    // Which objects (by index into the flattened pairs) get one mutation each.
    mutations: fc.array(fc.record({ target: fc.nat(), m: mutation }), { maxLength: 2 * n }),
    yaml: fc.boolean(),
  }),
);

describe('manifest source fuzzing', () => {
  it('never throws; each object delivered or refused by name; the good ones always programmed', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ pairs, mutations, yaml }) => {
        const good = pairs.flat();
        const bad: Json[] = [];
        const mutated = new Set<number>();
        for (const { target, m } of mutations) {
          const t = target % good.length;
          if (mutated.has(t)) continue;
          mutated.add(t);
          // A mutated copy under a new name, so that it never shadows a good object; the name's own
          // mutation still applies when picked.
          const renamed = structuredClone(good[t]!) as { metadata: { name: string }; spec?: { clusterIP?: string } };
          renamed.metadata.name = `mut-${t}`;
          // Its own ClusterIP too: a copy with the good one's would take it (the first by name wins a duplicate).
          if (renamed.spec?.clusterIP) renamed.spec.clusterIP = `198.18.${100 + t}.1`;
          bad.push(mutate(renamed as unknown as Json, m.pick, m.value));
        }
        const objects = [...good, ...bad];
        const file = join(dir, `run-${run++}.${yaml ? 'yaml' : 'json'}`);
        const list = { apiVersion: 'v1', kind: 'List', items: objects };
        await writeFile(file, yaml ? stringify(list) : JSON.stringify(list));

        const tracker = new ChangeTracker({ nodeName: 'node-a' });
        const delivered = new Set<string>();
        const problems: SourceProblem[] = [];
        const source = new ManifestSource(file, { watch: false });
        await source.start({
          service: (t, s) => {
            delivered.add(`Service ${s.metadata?.namespace}/${s.metadata?.name}`);
            tracker.service(t, s);
          },
          endpointSlice: (t, s) => {
            delivered.add(`EndpointSlice ${s.metadata?.namespace}/${s.metadata?.name}`);
            tracker.endpointSlice(t, s);
          },
          synced: () => {},
          problem: (p) => problems.push(p),
        });
        await source.stop();
        const snap = tracker.snapshot();

        objects.forEach((o, i) => {
          const meta = (o as { kind: string; metadata?: { name?: unknown; namespace?: unknown } }).metadata;
          const kind = (o as { kind: string }).kind;
          const key = `${kind} ${typeof meta?.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default'}/${typeof meta?.name === 'string' ? meta.name : '(not a name)'}`;
          const refused = problems.filter((p) => p.origin.endsWith(`items[${i}]`));
          if (i < good.length) {
            expect(refused, `good object ${key} refused`).toEqual([]);
            expect(delivered.has(key), `good object ${key} not delivered`).toBe(true);
          } else {
            expect(delivered.has(key) || refused.length > 0, `object ${i} (${JSON.stringify(o)}) neither delivered nor refused`).toBe(true);
          }
        });
        for (const p of problems) expect(p.reason.length).toBeGreaterThan(0);
        // Every good Service's ports are programmed with the endpoints of its good slice.
        for (const [svc, slice] of pairs) {
          const s = svc as { metadata: { name: string }; spec: { ports: { name: string }[] } };
          const eps = (slice as { endpoints: unknown[] }).endpoints.length;
          for (const p of s.spec.ports) {
            const id = `fuzz/${s.metadata.name}:${p.name}`;
            expect(snap.states.ipv4.services.has(id), `${id} programmed`).toBe(true);
            expect(snap.states.ipv4.endpoints.get(id)?.length ?? 0, `${id} endpoints`).toBeGreaterThanOrEqual(eps);
          }
        }
        expect(snap.invalid.filter((inv) => /^fuzz\/svc-/.test(inv.ref))).toEqual([]);
      }),
      { numRuns: 150 },
    );
  }, 30_000);
});
