import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileChangedError, FileWindow } from '../../../src/proxy/source/file-window.js';
import { scanJsonList, type JsonListSpans } from '../../../src/proxy/source/json-list.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';

const dir = mkdtempSync(join(tmpdir(), 'nftlink-list-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/**
 * Scans `text` from a file through a window of `windowBytes` (0: the whole file in memory, as a
 * first read has it); the items parsed, read back through the same window.
 */
function scan(text: string, windowBytes = 64 * 1024, hash?: (bytes: Uint8Array) => bigint, expectedItems?: number): { list: JsonListSpans; items: unknown[]; capacity: number } | undefined {
  const file = join(dir, `${files++}.json`);
  writeFileSync(file, text);
  const w = windowBytes === 0 ? FileWindow.of(Buffer.from(text)) : FileWindow.open(file, windowBytes);
  try {
    const list = scanJsonList(w, hash, expectedItems);
    if (!list) return undefined;
    const items: unknown[] = [];
    for (let i = 0; i < list.items.length; i += 2) items.push(JSON.parse(w.bytes(list.items[i]!, list.items[i + 1]!).toString('utf8')) as unknown);
    return { list, items, capacity: w.capacity };
  } finally {
    w.close();
  }
}

describe('a JSON List read item by item', () => {
  // Multi-byte characters too: the scan reads bytes, and none of theirs is a quote or a bracket.
  const list = { apiVersion: 'v1', items: [{ a: '}]"\\', b: [1, { c: null }] }, 'x', 3, true, null, [[]], 'é€😀', { '\ufeffitems': '\ufeff' }, 12345.678e-3, false], kind: 'List', metadata: { n: 'ü' } };

  it('finds each item and the List without them, whatever the items hold', () => {
    const text = JSON.stringify(list, null, 2);
    const read = scan(text)!;
    expect(read.items).toEqual(list.items);
    expect(JSON.parse(read.list.head)).toEqual({ ...list, items: null });
    // The deepest item nests three brackets (its own, b's array, the object in it); brackets in strings do not count.
    expect(read.list.deepest).toBe(3);
    expect(scan('{"items":[1,"[[[{{{"]}')!.list.deepest).toBe(0);
    // A key that starts with a byte order mark is not "items" (the decoder keeps the mark).
    expect(scan('{"\ufeffitems":[1]}')).toBeUndefined();
    expect(scan('{"items":[]}')!.items).toEqual([]);
    // More items than the scan's first allocation holds.
    const many = Array.from({ length: 5000 }, (_, i) => ({ i }));
    expect(scan(JSON.stringify({ kind: 'List', items: many }))!.items).toEqual(many);
  });

  it('gives the same through any window: values, keys, whitespace and scalars cut at its edge', () => {
    const texts = [JSON.stringify(list), JSON.stringify(list, null, 3), `  {  "items" : [ 1 , 22 , 333 , "4\\"4" , {"k" : [ ]} ] , "kind" : "List"  }  `];
    for (const text of texts) {
      const whole = scan(text)!;
      for (const windowBytes of [0, 1, 2, 3, 5, 7, 16, 64]) {
        const read = scan(text, windowBytes)!;
        expect(read.items, `window ${windowBytes}`).toEqual(whole.items);
        expect(read.list.head).toBe(whole.list.head);
        expect(read.list.items).toEqual(whole.list.items);
      }
    }
  });

  it('holds a window of its size however long the List, growing only for an item larger than it', () => {
    const small = Array.from({ length: 2000 }, (_, i) => ({ name: `service-${i}`, port: i }));
    expect(scan(JSON.stringify({ kind: 'List', items: small }), 256)!.capacity).toBe(256);
    const big = { name: 'x'.repeat(5000) };
    const read = scan(JSON.stringify({ kind: 'List', items: [...small.slice(0, 10), big, ...small.slice(10, 20)] }), 256)!;
    expect(read.items[10]).toEqual(big);
    expect(read.capacity).toBeGreaterThanOrEqual(5000);
  });

  it('hashes each item, when asked, from its own bytes', () => {
    const text = JSON.stringify({ kind: 'List', items: [{ a: 1 }, { a: 1 }, { a: 2 }] });
    const lengths: number[] = [];
    const read = scan(text, 4, (bytes) => {
      lengths.push(bytes.length);
      return BigInt(bytes.reduce((s, b) => s * 31 + b, 7) % 1_000_003);
    })!;
    expect(lengths).toEqual([7, 7, 7]);
    const [a, b, c] = read.list.hashes!;
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(scan(text)!.list.hashes).toBeUndefined();
    // Sized for as many items as the read before had: more, fewer or exactly as many, the same result.
    for (const expected of [1, 2, 3, 4, 100]) {
      const again = scan(text, 4, (bytes) => BigInt(bytes.length), expected)!;
      expect(again.items).toEqual([{ a: 1 }, { a: 1 }, { a: 2 }]);
      expect([...again.list.hashes!]).toEqual([7n, 7n, 7n]);
      expect(again.list.items).toHaveLength(6);
    }
  });

  it('leaves anything else to JSON.parse of the whole: no items, a second items, broken or trailing text', () => {
    for (const text of ['[1,2]', '{"kind":"List"}', '{"items":[1],"items":[2]}', '{"items":[1,2', '{"items":[1 2]}', '{"items":[1]} x', '{"items":{"a":1}}', '', '   ', '{', '{"items"', '{"items":', '{"items":[1]', '{"items":[1],']) {
      for (const windowBytes of [0, 1, 3, 64]) expect(scan(text, windowBytes), `${text} (window ${windowBytes})`).toBeUndefined();
    }
  });
});

describe('a file read through a window', () => {
  it('says so when the file became shorter than its scan found it (rewritten in place meanwhile)', () => {
    const file = join(dir, `${files++}.json`);
    writeFileSync(file, 'x'.repeat(1000));
    const w = FileWindow.open(file, 16);
    try {
      expect(w.bytes(10, 20).toString()).toBe('x'.repeat(10));
      truncateSync(file, 100);
      expect(() => w.bytes(500, 600)).toThrow(FileChangedError);
      expect(() => w.bytes(500, 600)).toThrow('the file became shorter while it was read (nothing at byte 500 of the 1000 it had)');
    } finally {
      w.close();
    }
  });
});

describe('a first read that streams a List', () => {
  it('takes back what it sent when a later item does not parse: the file fails as a whole', async () => {
    const good = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ name: 'http', port: 80 }] } };
    const manifests = mkdtempSync(join(dir, 'manifests-'));
    writeFileSync(join(manifests, 'list.json'), `{"kind":"List","items":[${JSON.stringify(good)},{"kind": tru}]}`);
    const events: string[] = [];
    const problems: string[] = [];
    const source = new ManifestSource(manifests, { watch: false });
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
  });
});
