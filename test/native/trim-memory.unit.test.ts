import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// In a process of its own: the C heap of a test worker holds whatever other tests left in it.
const script = `
const native = require('node-gyp-build')(process.cwd());
const anonKb = () => Number(/RssAnon:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]);
// 32 KiB each: under glibc's mmap threshold, so they come from the arena; every tenth kept, so
// that free() alone cannot give the pages back (they are not at the top of the heap).
const kept = [];
let all = [];
for (let i = 0; i < 1500; i++) { const b = Buffer.allocUnsafeSlow(32 * 1024); b.fill(i); all.push(b); if (i % 10 === 0) kept.push(b); }
all = undefined;
gc(); gc();
setTimeout(() => {
  const before = anonKb();
  const released = native.trimMemory();
  console.log(JSON.stringify({ before, after: anonKb(), released, kept: kept.length }));
}, 200);
`;

describe('trimMemory (glibc malloc_trim)', () => {
  it('gives the free pages in the middle of the C heap back to the kernel', () => {
    const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
    const r = JSON.parse(out) as { before: number; after: number; released: boolean };
    expect(r.released).toBe(true);
    // About 42 MB were freed in holes between the kept buffers.
    expect(r.before - r.after).toBeGreaterThan(20 * 1024);
  });
});
