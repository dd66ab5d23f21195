import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonListSpans } from '../../../src/proxy/source/json-list.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';

const spans = (text: string): ReturnType<typeof jsonListSpans> => jsonListSpans(Buffer.from(text));
const items = (text: string): unknown[] | undefined => {
  const bytes = Buffer.from(text);
  const l = jsonListSpans(bytes);
  if (!l) return undefined;
  const out: unknown[] = [];
  for (let i = 0; i < l.items.length; i += 2) out.push(JSON.parse(bytes.toString('utf8', l.items[i], l.items[i + 1])) as unknown);
  return out;
};

describe('a JSON List read item by item', () => {
  it('finds each item and the List without them, whatever the items hold', () => {
    // Multi-byte characters too: the scan reads bytes, and none of theirs is a quote or a bracket.
    const list = { apiVersion: 'v1', kind: 'List', items: [{ a: '}]"\\', b: [1, { c: null }] }, 'x', 3, true, null, [[]], 'é€😀', { '\ufeffitems': '\ufeff' }], metadata: { n: 'ü' } };
    const text = JSON.stringify(list, null, 2);
    expect(items(text)).toEqual(list.items);
    expect(JSON.parse(spans(text)!.head)).toEqual({ ...list, items: null });
    // The deepest item nests three brackets (its own, b's array, the object in it); brackets in strings do not count.
    expect(spans(text)!.deepest).toBe(3);
    expect(spans('{"items":[1,"[[[{{{"]}')!.deepest).toBe(0);
    // A key that starts with a byte order mark is not "items" (the decoder keeps the mark).
    expect(spans('{"\ufeffitems":[1]}')).toBeUndefined();
    expect(items('{"items":[]}')).toEqual([]);
    // More items than the scan's first allocation holds.
    const many = Array.from({ length: 5000 }, (_, i) => ({ i }));
    expect(items(JSON.stringify({ kind: 'List', items: many }))).toEqual(many);
  });

  it('leaves anything else to JSON.parse of the whole: no items, a second items, broken or trailing text', () => {
    for (const text of ['[1,2]', '{"kind":"List"}', '{"items":[1],"items":[2]}', '{"items":[1,2', '{"items":[1 2]}', '{"items":[1]} x', '{"items":{"a":1}}', '']) {
      expect(spans(text), text).toBeUndefined();
    }
  });
});

describe('a first read that streams a List', () => {
  it('takes back what it sent when a later item does not parse: the file fails as a whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nftlink-list-'));
    try {
      const good = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ name: 'http', port: 80 }] } };
      writeFileSync(join(dir, 'list.json'), `{"kind":"List","items":[${JSON.stringify(good)},{"kind": tru}]}`);
      const events: string[] = [];
      const problems: string[] = [];
      const source = new ManifestSource(dir, { watch: false });
      await source.start({
        service: (t, s) => events.push(`${t} ${s.metadata?.name}`),
        endpointSlice: () => {},
        synced: () => {},
        problem: (p) => problems.push(p.reason),
      });
      await source.stop();
      expect(events).toEqual(['add a', 'delete a']);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^not valid JSON: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
