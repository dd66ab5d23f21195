// Without CAP_NET_ADMIN the kernel refuses every nf_tables request with EPERM: the error says so with
// its `code`, as Node's system errors do, so a caller can tell "run me as root" from a bug.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);
const bundle = new URL('../../dist/bundle/index.js', import.meta.url);

// The library as a process without privileges runs it: nobody, no capabilities, inside a namespace
// the test made (so that nothing but that namespace is even asked).
const script = `
const { Nftables } = await import(${JSON.stringify(bundle.href)});
const out = {};
const nft = Nftables.open();
for (const [name, call] of [['dump', () => nft.dump()], ['generation', () => nft.generation()]]) {
  try { await call(); out[name] = 'no error'; } catch (e) { out[name] = { code: e.code, errno: e.errno, message: e.message }; }
}
nft.close();
console.log(JSON.stringify(out));
`;

it('dump and generation without CAP_NET_ADMIN fail with code EPERM', () => {
  if (!existsSync(bundle)) throw new Error('dist/ is missing: run npm run build:ts (scripts/test.sh does)');
  const target = ns();
  const r = spawnSync(
    'ip',
    ['netns', 'exec', target.name, 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout) as Record<string, { code: string; errno: number; message: string }>;
  for (const name of ['dump', 'generation']) {
    expect(out[name]).toMatchObject({ code: 'EPERM', errno: 1 });
    expect(out[name]!.message).toMatch(/Operation not permitted/);
  }
});
