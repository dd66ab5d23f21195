// A List that keeps changing is read as a patch of its read before when its changed items keep
// their objects' keys, and whole otherwise (manifest-objects.ts, ListPatch); the source's objects
// are then patched in place, or collected anew (manifests.ts, collectObjects). Property-based: a
// watching source follows random rewrites of two List files (an object's contents changed, objects
// renamed, added, removed, refused, or defined in both files; Services and EndpointSlices) and,
// after every re-read, what its events add up to is what a fresh read of the same files gives, and
// no Service is added or updated after an EndpointSlice in the same re-read (slices name Services;
// a read onto a source that holds nothing sends its objects as it reads them, in file order).

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../../src/k8s/objects.js';
import { ManifestSource, readManifests } from '../../../src/proxy/source/manifests.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'nftlink-list-patch-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** An item of a List: a Service or an EndpointSlice named from a small pool (so that names meet), its port refused when a string. */
interface Item {
  kind: 'Service' | 'EndpointSlice';
  name: string;
  port: number | string;
}

type Edit = { file: number; op: 'port' | 'rename' | 'insert' | 'remove' | 'refuse' | 'keep'; at: number; value: number; slice: boolean };

const NAMES = ['s0', 's1', 's2', 's3', 's4', 's5'];
const KINDS = ['Service', 'EndpointSlice'] as const;
const item: fc.Arbitrary<Item> = fc.record({ kind: fc.constantFrom(...KINDS), name: fc.constantFrom(...NAMES), port: fc.integer({ min: 80, max: 82 }) });
const edit: fc.Arbitrary<Edit> = fc.record({
  file: fc.integer({ min: 0, max: 1 }),
  op: fc.constantFrom('port', 'port', 'port', 'rename', 'insert', 'remove', 'refuse', 'keep'),
  at: fc.nat(),
  value: fc.nat(),
  slice: fc.boolean(),
});

function itemObject({ kind, name, port }: Item): object {
  if (kind === 'Service') return { apiVersion: 'v1', kind, metadata: { name, namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ port }] } };
  const labels = { 'kubernetes.io/service-name': name };
  return { apiVersion: 'discovery.k8s.io/v1', kind, metadata: { name, namespace: 'default', labels }, addressType: 'IPv4', endpoints: [{ addresses: ['198.19.0.10'] }], ports: [{ port }] };
}

function listText(items: readonly Item[]): string {
  return `{"apiVersion":"v1","kind":"List","items":[${items.map((i) => JSON.stringify(itemObject(i))).join(',')}]}`;
}

function apply(files: Item[][], { file, op, at, value, slice }: Edit): void {
  const items = files[file]!;
  const i = items.length ? at % items.length : 0;
  if (op === 'insert' || items.length === 0) items.splice(i, 0, { kind: slice ? 'EndpointSlice' : 'Service', name: NAMES[value % NAMES.length]!, port: 80 + (value % 3) });
  else if (op === 'port') items[i] = { ...items[i]!, port: 80 + (value % 3) };
  else if (op === 'rename') items[i] = { ...items[i]!, name: NAMES[value % NAMES.length]! };
  else if (op === 'remove') items.splice(i, 1);
  else if (op === 'refuse') items[i] = { ...items[i]!, port: 'eighty' };
}

const portOf = (obj: Service | EndpointSlice): unknown => ('spec' in obj ? obj.spec?.ports?.[0]?.port : (obj as EndpointSlice).ports?.[0]?.port);

it('a watching source re-reading changing Lists holds what a fresh read of them gives, after every re-read', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(item, { maxLength: 5 }), { minLength: 2, maxLength: 2 }), fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }), async (start, steps) => {
      const dir = join(root, `run-${run++}`);
      const files = start.map((items) => items.map((i) => ({ ...i })));
      const write = (): Promise<unknown> => Promise.all(files.map((items, f) => writeFile(join(dir, `list-${f}.json`), listText(items))));
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
      await write();
      const held = new Map<string, unknown>();
      /** The kinds of this re-read's adds and updates, in order. */
      let upserted: string[] = [];
      const event = (kind: string, type: string, obj: Service | EndpointSlice): void => {
        const key = `${kind}/${obj.metadata!.name!}`;
        if (type === 'delete') held.delete(key);
        else {
          held.set(key, portOf(obj));
          upserted.push(kind);
        }
      };
      // A debounce that never fires: each re-read below is run when the test says (rescan).
      const source = new ManifestSource(dir, { debounceMs: 2 ** 31 - 1 });
      await source.start({
        service: (type, svc) => event('Service', type, svc),
        endpointSlice: (type, slice) => event('EndpointSlice', type, slice),
        synced: () => {},
        problem: () => {},
      });
      const rescan = (): Promise<void> => (source as unknown as { rescan(): Promise<void> }).rescan();
      try {
        for (const edits of steps) {
          for (const e of edits) apply(files, e);
          await write();
          upserted = [];
          const streamed = held.size === 0;
          await rescan();
          const fresh = await readManifests(dir);
          const expected = new Map([...fresh.objects.values()].map((o) => [`${o.kind}/${o.object.metadata!.name!}`, portOf(o.object as Service | EndpointSlice)]));
          expect(held).toEqual(expected);
          const kindOrder = [...upserted.filter((k) => k === 'Service'), ...upserted.filter((k) => k === 'EndpointSlice')];
          expect(upserted).toEqual(streamed ? upserted : kindOrder);
        }
      } finally {
        await source.stop();
      }
    }),
    { numRuns: 150 },
  );
});
