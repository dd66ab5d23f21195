// What a manifest file that cannot be used costs a long-running manifest source: only itself. A
// half-written file keeps its last good objects (no deletions); a file with one bad object still
// programs its others on every re-read; an alias bomb, a 100,000-deep nesting or an oversized file
// is refused naming the file, quickly, while the other files apply.

import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_MANIFEST_BYTES, MAX_NESTING_DEPTH } from '../../../src/proxy/source/manifest-parse.js';
import { ManifestSource, readManifests } from '../../../src/proxy/source/manifests.js';
import { recorder, until, type Recorder } from './recorder.js';

let dir: string;
let source: ManifestSource | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nftlink-manifest-files-'));
});
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rm(dir, { recursive: true, force: true });
});

const service = (name: string, port = 80) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { clusterIP: '198.18.0.10', ports: [{ name: 'http', port }] },
});

const list = (...items: unknown[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 1);

async function watching(): Promise<Recorder> {
  const r = recorder();
  source = new ManifestSource(dir, { debounceMs: 10 });
  await source.start(r);
  return r;
}

describe('a long-running manifest source', () => {
  it('a half-written file keeps its last good objects: no deletion; the completed file then applies', async () => {
    const file = join(dir, 'services.json');
    const complete = list(service('a'), service('b'));
    await writeFile(file, complete);
    const r = await watching();
    expect(r.events).toEqual(['add a 80', 'add b 80']);

    // Written in place, caught halfway (as a non-atomic writer leaves it).
    const next = list(service('a', 81), service('b', 81));
    await writeFile(file, next.slice(0, next.length / 2));
    await until(() => r.problems.length === 1, 'the half-written file reported');
    expect(r.problems[0]!.origin).toBe(file);
    expect(r.problems[0]!.reason).toMatch(/^not valid JSON/);
    // A YAML file cut mid-way too (here in a flow mapping).
    await writeFile(join(dir, 'more.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: c, namespace: default}\nspec: {clusterIP: 198.18.0.11, ports: [{port: 80}]}\n');
    await until(() => r.events.includes('add c 80'), 'c added');
    // With no line break at its end, it is taken as being written and not parsed yet (see manifest-resilience).
    await writeFile(join(dir, 'more.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: c, namespace: default}\nspec: {clusterIP: 198.18.0.11, ports: [{port: 8');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.problems).toHaveLength(1);
    // Cut at a line end, where it does not parse: reported, and kept too.
    await writeFile(join(dir, 'more.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: c, namespace: default}\nspec: {clusterIP: 198.18.0.11, ports: [{port: 80,\n');
    await until(() => r.problems.length === 2, 'the half-written YAML reported');
    expect(r.problems[1]!.origin).toBe(join(dir, 'more.yaml'));
    expect(r.events.filter((e) => e.startsWith('delete'))).toEqual([]);

    await writeFile(file, next);
    await until(() => r.events.includes('update b 81'), 'the completed file applied');
    expect(r.events).toEqual(['add a 80', 'add b 80', 'add c 80', 'update a 81', 'update b 81']);
  });

  it('a file with one bad object programs all its others, on the first read and on every re-read', async () => {
    const file = join(dir, 'services.json');
    const bad = { ...service('bad'), spec: { clusterIP: '198.18.0.12', ports: [{ name: 'http', port: [80] }] } };
    await writeFile(file, list(service('a'), bad, service('b')));
    const r = await watching();
    expect(r.events).toEqual(['add a 80', 'add b 80']);
    expect(r.problems.map((p) => `${p.origin}: ${p.reason}`)).toEqual([`Service default/bad in ${file} items[1]: spec.ports[0].port: expected integer, not array`]);
    expect(r.problems[0]!.object).toEqual({ kind: 'Service', ref: 'default/bad' });

    // Re-read with a change to the good ones and the bad one still there: the good ones update,
    // the bad one is reported again (its file changed) and costs nothing else.
    await writeFile(file, list(service('a', 81), bad, service('b', 81), service('c')));
    await until(() => r.events.includes('add c 80'), 're-read');
    expect(r.events).toEqual(['add a 80', 'add b 80', 'update a 81', 'update b 81', 'add c 80']);
    expect(r.problems).toHaveLength(2);

    // An object that was good and turns bad is gone: refused, like a Service the API would not take.
    await writeFile(file, list({ ...service('a'), spec: { ports: 'http' } }, bad, service('b', 81), service('c')));
    await until(() => r.events.includes('delete a'), 'a refused');
    expect(r.problems.filter((p) => p.object?.ref === 'default/a').map((p) => p.reason)).toEqual(['spec.ports: expected array, not string']);
    expect(r.events.filter((e) => e.startsWith('delete'))).toEqual(['delete a']);
  });

  it('a file that is gone deletes its objects; one that fails to read first keeps them', async () => {
    await writeFile(join(dir, 'a.json'), list(service('a')));
    await writeFile(join(dir, 'b.json'), list(service('b')));
    const r = await watching();
    await writeFile(join(dir, 'a.json'), '{');
    await until(() => r.problems.length === 1, 'a.json reported');
    await rm(join(dir, 'b.json'));
    await until(() => r.events.includes('delete b'), 'b deleted');
    expect(r.events).toEqual(['add a 80', 'add b 80', 'delete b']);
    await rm(join(dir, 'a.json'));
    await until(() => r.events.includes('delete a'), 'a deleted with its file');
  });
});

describe('bounded parsing', () => {
  it('a YAML alias bomb is refused naming its file, quickly; the other files apply', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    await writeFile(join(dir, 'bomb.yaml'), `apiVersion: v1\nkind: Service\nmetadata: {name: bomb, namespace: default}\n${levels.join('\n')}\n`);
    await writeFile(join(dir, 'good.json'), list(service('a')));
    const started = Date.now();
    const read = await readManifests(dir);
    expect(Date.now() - started).toBeLessThan(2000);
    expect([...read.objects.keys()]).toEqual(['Service/default/a']);
    expect(read.problems).toEqual([{ origin: join(dir, 'bomb.yaml'), reason: expect.stringMatching(/^not valid YAML: Excessive alias count/) }]);
  });

  it('a 100,000-deep nesting is refused naming its file, in YAML (flow or block) and in JSON', async () => {
    const n = 100_000;
    await writeFile(join(dir, 'deep-flow.yaml'), `kind: Service\nmetadata: {name: deep}\nspec: ${'['.repeat(n)}${']'.repeat(n)}\n`);
    await writeFile(join(dir, 'deep.json'), `{"kind":"Service","metadata":{"name":"deep2"},"spec":${'['.repeat(n)}${']'.repeat(n)}}`);
    // Block style: indentation, as deep as a few MB allow.
    const depth = 1500;
    let block = 'kind: Service\nmetadata: {name: deep3}\nspec:\n';
    for (let i = 1; i <= depth; i++) block += `${' '.repeat(i)}k:\n`;
    await writeFile(join(dir, 'deep-block.yaml'), block);
    await writeFile(join(dir, 'good.json'), list(service('a')));
    const started = Date.now();
    const read = await readManifests(dir);
    expect(Date.now() - started).toBeLessThan(3000);
    expect([...read.objects.keys()]).toEqual(['Service/default/a']);
    expect(read.problems.map((p) => `${p.origin.replace(dir, '<dir>')}: ${p.reason}`)).toEqual([
      expect.stringMatching(new RegExp(`^<dir>/deep-block\\.yaml: .*nested deeper than ${MAX_NESTING_DEPTH} levels|^<dir>/deep-block\\.yaml: not valid YAML`)),
      `<dir>/deep-flow.yaml: not read: nested deeper than ${MAX_NESTING_DEPTH} levels`,
      `<dir>/deep.json: not read: nested deeper than ${MAX_NESTING_DEPTH} levels`,
    ]);
  });

  it('a List item nested to the limit reads, one level more fails the file, whichever item it is', async () => {
    // The List and its items array are two levels; the item's own brace is the third.
    const nested = (levels: number): string => JSON.stringify({ ...service('n'), x: 0 }).replace('"x":0', `"x":${'['.repeat(levels)}${']'.repeat(levels)}`);
    const atLimit = MAX_NESTING_DEPTH - 3;
    await writeFile(join(dir, 'ok.json'), `{"kind":"List","items":[${JSON.stringify(service('a'))},${nested(atLimit)}]}`);
    await writeFile(join(dir, 'deep.json'), `{"kind":"List","items":[${JSON.stringify(service('b'))},${nested(atLimit + 1)}]}`);
    const read = await readManifests(dir);
    expect(read.problems.map((p) => `${basename(p.origin)}: ${p.reason}`)).toEqual([`deep.json: not read: nested deeper than ${MAX_NESTING_DEPTH} levels`]);
    expect([...read.objects.keys()]).toEqual(['Service/default/a', 'Service/default/n']);
  });

  it('a file larger than the limit is refused unread, naming it', async () => {
    const big = join(dir, 'big.json');
    await writeFile(big, '');
    await truncate(big, MAX_MANIFEST_BYTES + 1); // sparse: nothing is written
    await writeFile(join(dir, 'good.json'), list(service('a')));
    const read = await readManifests(dir);
    expect([...read.objects.keys()]).toEqual(['Service/default/a']);
    expect(read.problems).toEqual([{ origin: big, reason: `not read: ${MAX_MANIFEST_BYTES + 1} bytes, more than ${MAX_MANIFEST_BYTES}` }]);
  });

  it('an apostrophe in plain text does not hide a deep flow nesting after it', async () => {
    await writeFile(join(dir, 'x.yaml'), `kind: Service\nmetadata: {name: x, annotations: {note: it's}}\nspec: ${'['.repeat(200)}${']'.repeat(200)}\n`);
    const read = await readManifests(dir);
    expect(read.problems.map((p) => p.reason)).toEqual([`not read: nested deeper than ${MAX_NESTING_DEPTH} levels`]);
  });
});
