import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// In a process of its own, started from a copy of node: the kernel gives back only pages no other
// process maps, and every test worker maps the pages of the node it runs (as the proxy, the only
// process of its executable on a node, does not share them).
const script = `
const native = require('node-gyp-build')(process.cwd());
const status = () => require('fs').readFileSync('/proc/self/status', 'utf8');
const kb = (field) => Number(new RegExp(field + ':\\\\s+(\\\\d+)').exec(status())[1]);
// Anonymous memory with known contents: it must come through untouched.
const held = Buffer.alloc(8 * 2 ** 20, 0x5a);
const before = { file: kb('RssFile'), anon: kb('RssAnon') };
const advised = native.releaseExecutablePages();
const after = { file: kb('RssFile'), anon: kb('RssAnon') };
// The process goes on: code it ran before (JSON, the module loader) and code it never ran (ICU's
// date formatting, a regular expression with a Unicode property), all read back as needed.
const later = JSON.parse(JSON.stringify({ a: [1, 2, 3] })).a.length === 3
  && new Intl.DateTimeFormat('de-CH', { timeZone: 'UTC', month: 'long' }).format(new Date(0)) === 'Januar'
  && /\\p{Lu}/u.test('Ä')
  && require('node:zlib').gunzipSync(require('node:zlib').gzipSync('x'.repeat(1000))).length === 1000;
console.log(JSON.stringify({ advised, before, after, later, intact: held.every((b) => b === 0x5a) }));
`;

describe('releaseExecutablePages (MADV_PAGEOUT over the executable)', () => {
  it("gives back the executable's resident pages, and leaves anonymous memory and the running process intact", () => {
    const dir = mkdtempSync(join(tmpdir(), 'nftlink-exe-'));
    let out: string;
    try {
      const node = join(dir, 'node');
      copyFileSync(process.execPath, node);
      out = execFileSync(node, ['-e', script], { encoding: 'utf8' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const r = JSON.parse(out) as { advised: number; before: { file: number; anon: number }; after: { file: number; anon: number }; later: boolean; intact: boolean };
    // The whole executable's read-only mappings: over 100 MB of address range for node 24.
    expect(r.advised).toBeGreaterThan(50 * 2 ** 20);
    // A started node has tens of MB of its executable resident; most of them go.
    expect(r.before.file).toBeGreaterThan(20 * 1024);
    expect(r.after.file).toBeLessThan(r.before.file / 2);
    expect(r.after.anon).toBeGreaterThanOrEqual(r.before.anon - 1024);
    expect(r.intact).toBe(true);
    expect(r.later).toBe(true);
  });
});
