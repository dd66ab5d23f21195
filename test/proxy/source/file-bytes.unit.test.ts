import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileBytes, releaseFileBytes } from '../../../src/proxy/source/file-bytes.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nftlink-bytes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a manifest file read whole (YAML, JSON that is not a List)', () => {
  it('gives exactly its bytes', async () => {
    const file = join(dir, 'a.yaml');
    writeFileSync(file, 'x'.repeat(1000));
    expect((await readFileBytes(file)).toString()).toBe('x'.repeat(1000));
    writeFileSync(file, '');
    expect((await readFileBytes(file)).length).toBe(0);
  });

  it('frees a buffer at once when asked: every view of it is empty afterwards', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, 'x'.repeat(100_000));
    const bytes = await readFileBytes(file);
    const view = bytes.subarray(10);
    releaseFileBytes(bytes);
    expect(bytes.buffer.byteLength).toBe(0);
    expect(bytes.length).toBe(0);
    expect(view.length).toBe(0);
  });

  it('never hands out a buffer shared with anything else', async () => {
    const file = join(dir, 'small.json');
    writeFileSync(file, '{}');
    const bytes = await readFileBytes(file);
    // Not a slice of Node's shared pool: the whole allocation is this file's.
    expect(bytes.buffer.byteLength).toBe(bytes.length);
  });
});
