// A long-running manifest source re-reads every file on any change, but parses and validates only
// the files whose text changed: the others give what they gave before, problems included.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { WINDOW_BYTES } from '../../../src/proxy/source/file-window.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';
import type { SourceProblem } from '../../../src/proxy/source/source.js';

const parsed = vi.hoisted(() => [] as string[]);
vi.mock('../../../src/proxy/source/manifest-parse.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/proxy/source/manifest-parse.js')>();
  return {
    ...original,
    parseManifest: (file: string, content: Parameters<typeof original.parseManifest>[1]) => {
      parsed.push(file);
      return original.parseManifest(file, content);
    },
  };
});

/** The files read whole, and each window a List was read through (file-window.ts). */
const wholeReads = vi.hoisted(() => [] as string[]);
vi.mock('../../../src/proxy/source/file-bytes.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/proxy/source/file-bytes.js')>();
  return {
    ...original,
    readFileBytes: async (file: string) => {
      wholeReads.push(file);
      return original.readFileBytes(file);
    },
  };
});
const windows = vi.hoisted(() => [] as { file: string; window: { capacity: number } }[]);
vi.mock('../../../src/proxy/source/file-window.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/proxy/source/file-window.js')>();
  const open = original.FileWindow.open.bind(original.FileWindow);
  original.FileWindow.open = (file: string, windowBytes?: number) => {
    const window = open(file, windowBytes);
    windows.push({ file, window });
    return window;
  };
  return original;
});

let dir: string;
let source: ManifestSource | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nftlink-reparse-'));
  parsed.length = 0;
  wholeReads.length = 0;
  windows.length = 0;
});
afterEach(async () => {
  await source?.stop();
  await rm(dir, { recursive: true, force: true });
});

const service = (name: string, port: number | string) => JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ port }] } });

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts a watching source on `dir`: the services it sends ("type name port") and the problems. */
async function startSource(listMemoMs?: number): Promise<{ events: string[]; problems: SourceProblem[] }> {
  const events: string[] = [];
  const problems: SourceProblem[] = [];
  source = new ManifestSource(dir, { debounceMs: 10, listMemoMs });
  await source.start({
    service: (t, s) => events.push(`${t} ${s.metadata?.name} ${s.spec?.ports?.[0]?.port}`),
    endpointSlice: () => {},
    synced: () => {},
    problem: (p) => problems.push(p),
  });
  return { events, problems };
}

it('an unchanged file is not parsed again, and its problem is not reported again', async () => {
  await writeFile(join(dir, 'a.json'), service('a', 80));
  await writeFile(join(dir, 'bad.json'), service('bad', 'eighty'));
  await writeFile(join(dir, 'b.json'), service('b', 80));
  const { events, problems } = await startSource();
  await writeFile(join(dir, 'b.json'), service('b', 81));
  await until(() => events.includes('update b 81'), 'b updated');
  await writeFile(join(dir, 'b.json'), service('b', 82));
  await until(() => events.includes('update b 82'), 'b updated again');
  expect(parsed.filter((f) => f.endsWith('a.json'))).toHaveLength(1);
  expect(parsed.filter((f) => f.endsWith('bad.json'))).toHaveLength(1);
  expect(parsed.filter((f) => f.endsWith('b.json')).length).toBeGreaterThanOrEqual(3);
  expect(problems.map((p) => p.reason)).toEqual(['spec.ports[0].port: expected integer, not string']);
  expect(events).toEqual(['add a 80', 'add b 80', 'update b 81', 'update b 82']);
});

it('a List whose head and items are unchanged is not parsed again, whatever the whitespace between its items', async () => {
  const items = [service('s0', 80), service('s1', 80)];
  const file = join(dir, 'list.json');
  await writeFile(file, `{"kind":"List","items":[${items.join(',')}]}`);
  const { events } = await startSource();
  await writeFile(file, `{"kind":"List","items":[\n  ${items.join(',\n  ')}\n]}`);
  // A file written after it: once it is read, so is the List's rewrite.
  await writeFile(join(dir, 'marker.json'), service('m', 80));
  await until(() => events.includes('add m 80'), 'the marker read');
  expect(parsed.filter((f) => f === file)).toHaveLength(1);
  // The List's own keys are part of what it holds: a List whose head changed is parsed again.
  await writeFile(file, `{"kind":"List","metadata":{"resourceVersion":"2"},"items":[${items.join(',')}]}`);
  await until(() => events.includes('update s1 80'), 'the List read again');
  expect(parsed.filter((f) => f === file)).toHaveLength(2);
});

it('a List rewritten again gives its unchanged items as they were: only the changed ones are sent, problems included', async () => {
  const list = (ports: (number | string)[]): string => `{"apiVersion":"v1","kind":"List","items":[${ports.map((p, i) => service(`s${i}`, p)).join(',')}]}`;
  const file = join(dir, 'list.json');
  await writeFile(file, list([80, 80, 'bad']));
  const { events, problems } = await startSource();
  expect(events).toEqual(['add s0 80', 'add s1 80']);
  // The first change is parsed whole (a file that never changed keeps nothing of its items)...
  await writeFile(file, list([80, 81, 'bad']));
  await until(() => events.includes('update s1 81'), 's1 updated');
  expect(events.slice(2)).toEqual(['update s0 80', 'update s1 81']);
  // ...from the second on, only what changed: s1 again, and s2, which now reads.
  await writeFile(file, list([80, 82, 83]));
  await until(() => events.includes('add s2 83'), 's2 added');
  expect(events.slice(4)).toEqual(['update s1 82', 'add s2 83']);
  // A problem of an unchanged item is reported again when its file changed, as a parse of it would.
  await writeFile(file, list([80, 82, 'bad']));
  await until(() => events.includes('delete s2 undefined'), 's2 refused');
  await writeFile(file, list([84, 82, 'bad']));
  await until(() => events.includes('update s0 84'), 's0 updated');
  const refusals = problems.filter((p) => p.origin.includes('items[2]')).map((p) => `${p.origin}: ${p.reason}`);
  expect(refusals).toHaveLength(4);
  expect(new Set(refusals).size).toBe(1);
});

it('a List that stopped changing forgets what its items gave: its next change is read whole', async () => {
  const list = (ports: number[]): string => `{"apiVersion":"v1","kind":"List","items":[${ports.map((p, i) => service(`s${i}`, p)).join(',')}]}`;
  const file = join(dir, 'list.json');
  await writeFile(file, list([80, 80]));
  const { events } = await startSource(300);
  await writeFile(file, list([80, 81]));
  await until(() => events.includes('update s1 81'), 's1 updated');
  // While it changes, only what changed is sent...
  await writeFile(file, list([80, 82]));
  await until(() => events.includes('update s1 82'), 's1 updated again');
  expect(events.slice(4)).toEqual(['update s1 82']);
  // ...and once it has been quiet for listMemoMs, a change is read whole, as a first change is.
  await new Promise((r) => setTimeout(r, 500));
  await writeFile(file, list([80, 83]));
  await until(() => events.includes('update s1 83'), 's1 updated after the pause');
  expect(events.slice(5)).toEqual(['update s0 80', 'update s1 83']);
});

it('an unchanged item of a List whose kind changed is read again: the List implies its kind', async () => {
  const item = (name: string): string => JSON.stringify({ apiVersion: 'v1', metadata: { name, namespace: 'default' }, spec: { clusterIP: '198.18.0.11', ports: [{ port: 80 }] } });
  const file = join(dir, 'list.json');
  const write = (kind: string, names: string[]): Promise<void> => writeFile(file, `{"apiVersion":"v1","kind":"${kind}","items":[${names.map(item).join(',')}]}`);
  await write('ServiceList', ['x']);
  const { events } = await startSource();
  // A second read of a changed file keeps what its items gave...
  await write('ServiceList', ['x', 'y']);
  await until(() => events.includes('add y 80'), 'y added');
  // ...but x, the same bytes at the same place, is not a Service in a NodeList.
  await write('NodeList', ['x', 'y']);
  await until(() => events.includes('delete x undefined') && events.includes('delete y undefined'), 'both gone as Services');
  expect(events).toEqual(['add x 80', 'update x 80', 'add y 80', 'delete x undefined', 'delete y undefined']);
});

it('a List that keeps changing is read again through a small window, not whole (its items are told apart by hash)', async () => {
  // Each service padded to about 1 KB, as real ones are: 300 of them are several windows' worth.
  const list = (ports: number[]): string => `{"apiVersion":"v1","kind":"List","items":[${ports.map((p, i) => service(`s${i}`, p).replace('"spec"', `"pad":"${'x'.repeat(900)}","spec"`)).join(',')}]}`;
  const ports = Array.from({ length: 300 }, () => 80);
  const file = join(dir, 'list.json');
  await writeFile(file, list(ports));
  const { events } = await startSource();
  for (const port of [81, 82, 83, 84]) {
    ports[1] = port;
    await writeFile(file, list(ports));
    await until(() => events.includes(`update s1 ${port}`), `s1 at ${port}`);
  }
  // The first read takes the file whole (and frees it once parsed); every later one goes through a window.
  expect(wholeReads.filter((f) => f === file)).toHaveLength(1);
  const ofList = windows.filter((w) => w.file === file);
  expect(ofList.length).toBeGreaterThanOrEqual(4);
  // No read held more of the file than its window's size (the items are smaller than that).
  for (const { window } of ofList) expect(window.capacity).toBeLessThanOrEqual(WINDOW_BYTES);
  expect(list(ports).length).toBeGreaterThan(4 * WINDOW_BYTES);
  // The first change is read whole (a first read keeps nothing: every object is updated); after
  // it, same length, other bytes: each change of a port (82 -> 83 ...) is an update, and only s1's.
  expect(events.slice(300, 600)).toEqual(ports.map((p, i) => `update s${i} ${i === 1 ? 81 : p}`));
  expect(events.slice(600)).toEqual(['update s1 82', 'update s1 83', 'update s1 84']);
});
