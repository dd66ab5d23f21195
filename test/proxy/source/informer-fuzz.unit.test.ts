// Property-based: the generated Services and EndpointSlices of the manifest fuzzer
// (test/fixtures/manifest-fuzz.ts), fed through the informer source instead of files: listed at
// start or added, updated and deleted through the fake API server's watches, with bad versions
// of good objects under their own names, good versions restored after them, and faults on the
// watch streams themselves (a cut JSON line, junk, an event that is no object, one of another kind
// or of an unknown type, an ERROR event). A ChangeTracker runs behind the source. Whatever the mix:
// nothing throws and nothing rejects unhandled; every good object is delivered and programmed;
// every bad one is delivered or refused by a problem naming its kind and namespace/name; a bad
// version takes only its own object away (the reflector treats a refused version as absent, see
// test/k8s/reflector-validation.unit.test.ts), and a faulty stream takes nothing away.
//
// Sized for CI (60 runs, a few seconds); NFTLINK_FUZZ_RUNS=N runs N. The objects covered are printed.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectApi, type ApiConnection } from '../../../src/k8s/kubeconfig.js';
import type { EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { printable } from '../../../src/k8s/validation/printable.js';
import { silentLogger, type Logger } from '../../../src/logging/logger.js';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';
import { InformerSource } from '../../../src/proxy/source/informers.js';
import type { SourceProblem } from '../../../src/proxy/source/source.js';
import { FUZZ_NAMESPACE, fuzzFile, mutate, mutation, type Json } from '../../fixtures/manifest-fuzz.js';
import { FakeApiServer, type Obj, type Resource } from '../../helpers/fake-apiserver.mjs';
import { kubeconfigYaml } from '../../helpers/kubeconfig.js';

const NODE = 'node-a';
const RUNS = Number(process.env.NFTLINK_FUZZ_RUNS ?? 60);

type Kind = 'Service' | 'EndpointSlice';
const RESOURCE: Record<Kind, Resource> = { Service: 'services', EndpointSlice: 'endpointslices' };

/**
 * Faults written onto a watch stream as they are (nothing stored in the server); 'relist': the
 * history compacted and the watches dropped, so that every reflector relists (after 410 Gone).
 */
const FAULTS = ['cut-line', 'junk', 'null', 'array', 'unknown-type', 'wrong-kind', 'error-event', 'relist'] as const;
type Fault = (typeof FAULTS)[number];

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The reflector's cache key of an object ("namespace/name"), or undefined when it has no usable name. */
function reflectorKey(o: Json): string | undefined {
  const meta = isRecord(o) ? o.metadata : undefined;
  if (!isRecord(meta) || typeof meta.name !== 'string' || meta.name === '') return undefined;
  return `${typeof meta.namespace === 'string' ? meta.namespace : ''}/${meta.name}`;
}

/** Whether the fake server can store it (as an API server would have): a name, a namespace and labels of the right types. */
function storable(o: Json): o is Obj & Json {
  const meta = isRecord(o) ? o.metadata : undefined;
  return isRecord(meta) && reflectorKey(o) !== undefined && (meta.namespace === undefined || typeof meta.namespace === 'string') && (meta.labels === undefined || isRecord(meta.labels));
}

const kindOf = (o: Json): Kind => (o as { kind: Kind }).kind;

/**
 * An object as the API server's JSON carries it: what a source can deliver "as written". JSON has no
 * negative zero (a mutated port of -0 arrives as 0), and drops undefined members.
 */
function onTheWire(o: unknown): unknown {
  return JSON.parse(JSON.stringify(o));
}

/** An object as delivered, compared with what was written: the server's uid and resourceVersion left out. */
function comparable(o: unknown): unknown {
  const { metadata, ...rest } = o as { metadata: Record<string, unknown> };
  const { uid: _uid, resourceVersion: _rv, ...meta } = metadata;
  return { ...rest, metadata: meta };
}

/** What one run writes, besides the generated file. */
const scenario = fc.record({
  file: fc.integer({ min: 0, max: 7999 }).chain((i) => fuzzFile(i)),
  /** How many of the file's objects exist before the source starts (they arrive by the list). */
  listed: fc.nat(),
  /** Bad versions of good objects under the same name; some followed by the good version again. */
  versions: fc.array(fc.record({ target: fc.nat(), m: mutation, restore: fc.boolean() }), { maxLength: 4 }),
  deletes: fc.array(fc.nat(), { maxLength: 3 }),
  faults: fc.array(fc.record({ kind: fc.constantFrom<Kind>('Service', 'EndpointSlice'), fault: fc.constantFrom(...FAULTS), target: fc.nat() }), { maxLength: 3 }),
});

const covered = {
  runs: 0,
  goodWritten: 0,
  badWritten: 0,
  badThroughList: 0,
  badInjected: 0,
  badDelivered: 0,
  badRefused: 0,
  sameNameBadVersions: 0,
  restores: 0,
  deletes: 0,
  faults: {} as Record<string, number>,
  events: 0,
  problems: 0,
  shadowedByDuplicateClusterIP: 0,
};

let dir: string;
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown): void => void unhandled.push(err);
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nftlink-informer-fuzz-'));
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
  rmSync(dir, { recursive: true, force: true });
  console.log(`informer fuzzing covered: ${JSON.stringify(covered)}`);
});

async function waitFor(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A fake API server and a connection to it through a kubeconfig, as a node has. */
async function fakeCluster(name: string): Promise<{ api: FakeApiServer; connection: ApiConnection; close: () => Promise<void> }> {
  const api = new FakeApiServer();
  await api.start();
  writeFileSync(join(dir, 'token'), 't');
  const kubeconfig = join(dir, `kubeconfig-${name}`);
  writeFileSync(kubeconfig, kubeconfigYaml({ server: api.url, tokenFile: 'token' }));
  const connection = await connectApi({ kubeconfig });
  return {
    api,
    connection,
    close: async () => {
      connection.close();
      await api.stop();
    },
  };
}

const FAST_RETRIES = { backoff: { initialMs: 5, maxMs: 20, jitter: 0 }, watchTimeoutSeconds: () => 60 };

/** What the final state must show for one object key ("Kind namespace/name"). */
type Final = { is: 'good' | 'absent' | 'bad'; obj: Json };

async function runScenario(s: Scenario, run: number): Promise<void> {
  const { api, connection, close } = await fakeCluster(String(run));
  const warnings: string[] = [];
  const log: Logger = { error: (m, f) => warnings.push(`${m} ${JSON.stringify(f)}`), warn: (m, f) => warnings.push(`${m} ${JSON.stringify(f)}`), info: () => {}, debug: () => {} };
  const source = new InformerSource({ nodeName: NODE, log, connection, reflector: FAST_RETRIES });
  const tracker = new ChangeTracker({ nodeName: NODE });

  /** The latest delivered version of each object, by "Kind namespace/name". */
  const delivered = new Map<string, Service | EndpointSlice>();
  const everDelivered = new Set<string>();
  const problems: SourceProblem[] = [];
  const thrown: unknown[] = [];
  let synced = false;
  const deliver = (kind: Kind, type: string, o: Service | EndpointSlice): void => {
    covered.events++;
    const key = `${kind} ${typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : ''}/${o.metadata?.name}`;
    everDelivered.add(key);
    if (type === 'delete') delivered.delete(key);
    else delivered.set(key, o);
  };
  const handler = {
    service: (t: 'add' | 'update' | 'delete', o: Service, v?: string) => {
      deliver('Service', t, o);
      try {
        tracker.service(t, o, v);
      } catch (err) {
        thrown.push(err);
      }
    },
    endpointSlice: (t: 'add' | 'update' | 'delete', o: EndpointSlice, v?: string) => {
      deliver('EndpointSlice', t, o);
      try {
        tracker.endpointSlice(t, o, v);
      } catch (err) {
        thrown.push(err);
      }
    },
    node: () => {},
    synced: () => (synced = true),
    problem: (p: SourceProblem) => problems.push(p),
  };

  const good = s.file.pairs.flat();
  const finals = new Map<string, Final>();
  const everBad = new Set<string>();
  const goodWritten = new Set<string>();
  let unnamedInjected = 0;
  /** A named object went onto a watch without being stored: a relist would rightly disagree with the stream. */
  let rawKeyed = false;
  let relists = 0;
  let watching = false;
  const deferred: Json[] = [];

  /** Writes one version: stored (list or watch) when an API server could hold it, else written raw onto the watch. */
  const write = (o: Json, is: 'good' | 'bad'): void => {
    const kind = kindOf(o);
    const key = reflectorKey(o);
    if (is === 'good') {
      covered.goodWritten++;
      goodWritten.add(`${kind} ${key}`);
    } else covered.badWritten++;
    if (storable(o)) {
      api.upsert(RESOURCE[kind], o);
      if (is === 'bad' && !watching) covered.badThroughList++;
    } else {
      if (!watching) return void deferred.push(o);
      covered.badInjected++;
      expect(api.writeToWatches(RESOURCE[kind], `${JSON.stringify({ type: 'ADDED', object: o })}\n`)).toBe(1);
      if (key === undefined) unnamedInjected++;
      else rawKeyed = true;
    }
    if (key !== undefined) {
      finals.set(`${kind} ${key}`, { is, obj: o });
      if (is === 'bad') everBad.add(`${kind} ${key}`);
    }
  };

  /** Waits until every event written so far has been handled: a marker object goes through each watch. */
  let markerPort = 1;
  const settle = async (): Promise<void> => {
    markerPort++;
    const rvs = (['Service', 'EndpointSlice'] as Kind[]).map((kind) => {
      const marker =
        kind === 'Service'
          ? { kind, apiVersion: 'v1', metadata: { name: 'zz-marker', namespace: 'marker' }, spec: { clusterIP: '198.19.250.1', ports: [{ name: 'p', port: markerPort, protocol: 'TCP' }] } }
          : { kind, apiVersion: 'discovery.k8s.io/v1', metadata: { name: 'zz-marker-abc', namespace: 'marker', labels: { 'kubernetes.io/service-name': 'zz-marker' } }, addressType: 'IPv4', endpoints: [], ports: [{ name: 'p', port: markerPort, protocol: 'TCP' }] };
      return [kind, api.upsert(RESOURCE[kind], marker).metadata.resourceVersion] as const;
    });
    await waitFor('markers', () => rvs.every(([kind, rv]) => delivered.get(`${kind} marker/${kind === 'Service' ? 'zz-marker' : 'zz-marker-abc'}`)?.metadata?.resourceVersion === rv));
  };

  try {
    // 1. Some objects exist before the source starts: they arrive by the list.
    const all = [...good, ...s.file.bad];
    const listed = s.listed % (all.length + 1);
    all.slice(0, listed).forEach((o, i) => write(o, i < good.length ? 'good' : 'bad'));
    await source.start(handler);
    await waitFor('synced', () => synced);
    await waitFor('watches', () => api.openWatches === 3);
    watching = true;
    // 2. The rest arrive by the watches (and what no API server would have stored, written raw).
    for (const o of deferred.splice(0)) write(o, 'bad');
    all.slice(listed).forEach((o, i) => write(o, listed + i < good.length ? 'good' : 'bad'));
    // 3. Bad versions of good objects under their own name; some followed by the good version again.
    for (const v of s.versions) {
      const target = good[v.target % good.length]!;
      covered.sameNameBadVersions++;
      write(mutate(target, v.m.pick, v.m.value), 'bad');
      if (v.restore) {
        covered.restores++;
        write(target, 'good');
      }
    }
    // 4. Deletes of good objects.
    for (const d of s.deletes) {
      const target = good[d % good.length]!;
      const key = `${kindOf(target)} ${reflectorKey(target)}`;
      if (finals.get(key)?.is === 'absent') continue;
      covered.deletes++;
      api.remove(RESOURCE[kindOf(target)], FUZZ_NAMESPACE, (target as { metadata: { name: string } }).metadata.name);
      finals.set(key, { is: 'absent', obj: target });
    }
    await settle();

    // 5. Faults on the streams, one at a time: each must take nothing away.
    const versions = (): string[] =>
      [...delivered]
        .filter(([k]) => !k.includes(' marker/'))
        .map(([k, o]) => `${k} ${o.metadata?.resourceVersion}`)
        .sort();
    const before = versions();
    for (const f of s.faults) {
      if (f.fault === 'relist' && rawKeyed) continue;
      covered.faults[f.fault] = (covered.faults[f.fault] ?? 0) + 1;
      const present = [...delivered.values()].filter((o) => o.kind === f.kind && o.metadata?.namespace === FUZZ_NAMESPACE);
      const victim = present[f.target % Math.max(1, present.length)];
      await waitFor('watches', () => api.openWatches === 3);
      const problemsBefore = problems.length;
      if (f.fault === 'relist') {
        relists++;
        // Another node's change first, so that both watches are behind the compacted version.
        api.upsert('nodes', { kind: 'Node', apiVersion: 'v1', metadata: { name: `other-node-${relists}` } });
        api.compact();
        api.dropWatches();
      } else api.writeToWatches(RESOURCE[f.kind], faultLine(f.fault, f.kind, victim));
      await settle();
      if (f.fault === 'wrong-kind' && victim) {
        const named = problems.slice(problemsBefore).filter((p) => p.origin.includes(`${f.kind} ${printable(`${FUZZ_NAMESPACE}/${victim.metadata!.name}`)} (`));
        expect(named.length, `a ${f.kind} watch event carrying another kind is refused naming it`).toBeGreaterThan(0);
      }
      expect(versions(), `after fault ${f.fault} on ${f.kind}: the same objects in the same versions`).toEqual(before);
    }

    // The checks.
    expect(thrown, 'the tracker threw').toEqual([]);
    expect(unhandled, 'unhandled rejections or exceptions').toEqual([]);
    for (const p of problems) expect(p.reason, `problem without a reason: ${p.origin}`).not.toBe('');
    covered.problems += problems.length;
    const failures = Object.values(source.stats()).reduce((n, st) => n + st.failures, 0);
    // A relist drops all three watches (three failures), then each relists after 410 Gone; a 410
    // soon after the previous one counts as a failure too (the reflector backs off): three more.
    expect(failures, `list/watch failures without a fault: ${warnings.join('; ')}`).toBeLessThanOrEqual(s.faults.length + 5 * relists);
    // (The Node reflector relists too, in its own time: no marker goes through it.)
    expect([source.stats().services!.relistsAfterGone, source.stats().endpointSlices!.relistsAfterGone]).toEqual([relists, relists]);
    expect(problems.filter((p) => p.reason === 'object without metadata.name').length).toBeGreaterThanOrEqual(unnamedInjected);

    for (const key of goodWritten) expect(everDelivered.has(key), `good ${key} delivered`).toBe(true);
    const named = (kind: Kind, key: string) => problems.some((p) => p.origin.includes(`${kind} ${printable(key)} (`));
    for (const [key, final] of finals) {
      const got = delivered.get(key);
      const kind = kindOf(final.obj);
      const refKey = key.slice(kind.length + 1);
      if (final.is === 'good') {
        expect(got && comparable(got), `good ${key} in place, as written`).toEqual(onTheWire(final.obj));
      } else if (final.is === 'absent') {
        expect(got, `deleted ${key} gone`).toBeUndefined();
      } else if (got) {
        covered.badDelivered++;
        expect(comparable(got), `bad ${key} delivered as written`).toEqual(onTheWire(final.obj));
      } else {
        covered.badRefused++;
        expect(named(kind, refKey), `bad ${key} neither delivered nor refused by a problem naming it`).toBe(true);
      }
    }

    // The tracker's model: every good service port with its slice's endpoints; nothing of what is gone.
    const snap = tracker.snapshot();
    const state = snap.states.ipv4;
    for (const [svc, slice] of s.file.pairs) {
      const svcFinal = finals.get(`Service ${reflectorKey(svc)}`)!;
      const sliceFinal = finals.get(`EndpointSlice ${reflectorKey(slice)}`)!;
      const name = (svc as { metadata: { name: string } }).metadata.name;
      const ports = (svc as { spec: { ports: { name: string }[] } }).spec.ports;
      // A bad version whose namespace or name was the field mutated is another Service with the same
      // ClusterIP: the duplicate rule (test/proxy/model) picks one of the two, not this test.
      const clusterIP = (svc as { spec: { clusterIP: string } }).spec.clusterIP;
      const shadowed = [...delivered].some(([k, o]) => k.startsWith('Service ') && k !== `Service ${reflectorKey(svc)}` && (o as Service).spec?.clusterIP === clusterIP);
      if (shadowed) covered.shadowedByDuplicateClusterIP++;
      if (svcFinal.is === 'good' && !shadowed) {
        for (const p of ports) {
          const id = `${FUZZ_NAMESPACE}/${name}:${p.name}`;
          expect(state.services.has(id), `${id} programmed`).toBe(true);
          if (sliceFinal.is === 'good') expect(state.endpoints.get(id)?.length ?? 0, `${id} endpoints`).toBeGreaterThanOrEqual((slice as { endpoints: unknown[] }).endpoints.length);
        }
        if (!everBad.has(`Service ${reflectorKey(svc)}`)) expect(snap.invalid.filter((inv) => inv.ref === `${FUZZ_NAMESPACE}/${name}`)).toEqual([]);
      } else if (svcFinal.is !== 'good' && !delivered.has(`Service ${reflectorKey(svc)}`)) {
        expect([...state.services.keys()].filter((id) => id.startsWith(`${FUZZ_NAMESPACE}/${name}:`)), `${name} is gone`).toEqual([]);
      }
    }
  } finally {
    await source.stop();
    await close();
  }
}

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** The text of one stream fault; `victim`: a delivered object whose name a wrong-kind event reuses. */
function faultLine(fault: Exclude<Fault, 'relist'>, kind: Kind, victim: Service | EndpointSlice | undefined): string {
  const name = victim?.metadata?.name ?? 'nobody';
  switch (fault) {
    case 'cut-line':
      return `{"type":"MODIFIED","object":{"kind":"${kind}","metadata":{"name":"${name}","namespace":"${FUZZ_NAMESPACE}","resourceVersion":"9\n`;
    case 'junk':
      return 'HTTP/1.1 200 OK\n';
    case 'null':
      return 'null\n';
    case 'array':
      return '[{"type":"DELETED"}]\n';
    case 'unknown-type':
      return `${JSON.stringify({ type: 'REPLACED', object: victim ?? { metadata: { name } } })}\n`;
    case 'wrong-kind': {
      // An object of the other kind under a present object's name (a misrouted event).
      const other = kind === 'Service' ? { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', addressType: 'IPv4', endpoints: [] } : { kind: 'Service', apiVersion: 'v1', spec: { clusterIP: '198.19.250.2', ports: [{ port: 1 }] } };
      return `${JSON.stringify({ type: 'MODIFIED', object: { ...other, metadata: { name, namespace: FUZZ_NAMESPACE } } })}\n`;
    }
    case 'error-event':
      return `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'injected' } })}\n`;
  }
}

describe('informer source fuzzing', () => {
  it(
    'through list and watch: never throws; each object delivered or refused by name; good ones programmed; faults take nothing away',
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          covered.runs++;
          await runScenario(s, run++);
        }),
        { numRuns: RUNS },
      );
    },
    30_000 + RUNS * 1000,
  );
});

describe('informer source: a watch event of another kind', () => {
  it('is refused naming the object and the kind, and takes the object of that name away not', async () => {
    const { api, connection, close } = await fakeCluster('kind');
    const source = new InformerSource({ nodeName: NODE, log: silentLogger, connection, reflector: FAST_RETRIES });
    const events: string[] = [];
    const problems: string[] = [];
    let synced = false;
    try {
      api.upsert('services', { kind: 'Service', apiVersion: 'v1', metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ port: 80 }] } });
      await source.start({
        service: (t, o) => events.push(`${t} ${o.metadata?.name} ${JSON.stringify(o.spec?.ports?.map((p) => p.port))}`),
        endpointSlice: () => {},
        synced: () => (synced = true),
        problem: (p) => problems.push(`${p.origin.replace(api.url, 'URL')}: ${p.reason}`),
      });
      await waitFor('synced and watching', () => synced && api.openWatches === 3);
      // A misrouted event: an EndpointSlice (no spec at all) and a Node under the Service's name.
      api.writeToWatches('services', `${JSON.stringify({ type: 'MODIFIED', object: { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata: { name: 'web', namespace: 'default', resourceVersion: '999' }, addressType: 'IPv4', endpoints: [] } })}\n`);
      api.writeToWatches('services', `${JSON.stringify({ type: 'DELETED', object: { kind: 'Node', apiVersion: 'v1', metadata: { name: 'web', namespace: 'default' } } })}\n`);
      api.upsert('services', { kind: 'Service', apiVersion: 'v1', metadata: { name: 'after', namespace: 'default' }, spec: { clusterIP: '198.18.0.11', ports: [{ port: 81 }] } });
      await waitFor('the next event', () => events.some((e) => e.startsWith('add after')));
      expect(events).toEqual(['add web [80]', 'add after [81]']);
      expect(problems).toEqual([
        "URL Service default/web (MODIFIED event): the object's kind is EndpointSlice, not Service: ignored",
        "URL Service default/web (DELETED event): the object's kind is Node, not Service: ignored",
      ]);
    } finally {
      await source.stop();
      await close();
    }
  });
});

describe('informer source: a very large watch event', () => {
  it('is handled like any other (an 8 MB annotation is delivered), and the events after it arrive', async () => {
    const { api, connection, close } = await fakeCluster('big');
    const source = new InformerSource({ nodeName: NODE, log: silentLogger, connection, reflector: FAST_RETRIES });
    const sizes = new Map<string, number>();
    let synced = false;
    const svc = (name: string, annotations: Record<string, string> = {}) => ({ kind: 'Service', apiVersion: 'v1', metadata: { name, namespace: 'default', annotations }, spec: { clusterIP: '198.18.0.10', ports: [{ port: 80 }] } });
    try {
      await source.start({
        service: (_t, o) => sizes.set(o.metadata!.name!, o.metadata?.annotations?.big?.length ?? 0),
        endpointSlice: () => {},
        synced: () => (synced = true),
        problem: () => {},
      });
      await waitFor('synced and watching', () => synced && api.openWatches === 3);
      api.upsert('services', svc('big', { big: 'x'.repeat(8 << 20) }));
      api.upsert('services', svc('after'));
      await waitFor('the event after the big one', () => sizes.has('after'), 20_000);
      expect(sizes.get('big')).toBe(8 << 20);
      expect(Object.values(source.stats()).reduce((n, st) => n + st.failures, 0)).toBe(0);
    } finally {
      await source.stop();
      await close();
    }
  }, 30_000);
});
