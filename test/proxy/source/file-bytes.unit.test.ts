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

describe('a manifest file read into the buffer of an earlier read', () => {
  it('reads into the spare when the file fits, whatever the spare held', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, 'x'.repeat(1000));
    const first = await readFileBytes(file);
    expect(first.bytes.toString()).toBe('x'.repeat(1000));
    writeFileSync(file, 'y'.repeat(600));
    const second = await readFileBytes(file, first.buffer);
    expect(second.bytes.toString()).toBe('y'.repeat(600));
    expect(second.buffer).toBe(first.buffer);
    // Exactly the spare's size: the whole spare, and nothing read past it.
    writeFileSync(file, 'z'.repeat(1000));
    const exact = await readFileBytes(file, second.buffer);
    expect(exact.bytes.toString()).toBe('z'.repeat(1000));
    expect(exact.buffer).toBe(first.buffer);
    writeFileSync(file, '');
    expect((await readFileBytes(file, first.buffer)).bytes.length).toBe(0);
  });

  it('takes a buffer of its own, with room to grow, for a file that outgrew the spare', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, 'a'.repeat(100));
    const first = await readFileBytes(file);
    const text = 'b'.repeat(5000);
    writeFileSync(file, text);
    const grown = await readFileBytes(file, first.buffer);
    expect(grown.bytes.toString()).toBe(text);
    expect(grown.buffer).not.toBe(first.buffer);
    expect(grown.buffer.length).toBeGreaterThan(text.length);
    // The spare it was handed is untouched past what fit.
    expect(first.buffer.toString()).toBe('b'.repeat(100));
  });

  it('frees a buffer at once when asked: every view of it is empty afterwards', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, 'x'.repeat(100_000));
    const read = await readFileBytes(file);
    releaseFileBytes(read.buffer);
    expect(read.buffer.buffer.byteLength).toBe(0);
    expect(read.bytes.length).toBe(0);
    expect(read.buffer.length).toBe(0);
  });

  it('never hands out a buffer shared with anything else', async () => {
    const file = join(dir, 'small.json');
    writeFileSync(file, '{}');
    const read = await readFileBytes(file);
    // Not a slice of Node's shared pool: the whole allocation is this file's.
    expect(read.buffer.buffer.byteLength).toBe(read.buffer.length);
    expect(read.bytes.buffer).toBe(read.buffer.buffer);
  });
});
