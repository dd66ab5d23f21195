// `nftlink proxy --config FILE` with a bad KubeProxyConfiguration: exit code 1, an error that names
// the field, and nothing programmed (no kube-proxy table in the namespace it runs in).

import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Netns } from '../helpers/netns.js';
import { ProxyFiles, runProxy, tables } from './harness.js';

let ns: Netns;
let files: ProxyFiles;

beforeAll(() => {
  ns = Netns.create('nle2eb');
  files = new ProxyFiles();
});

afterAll(() => {
  ns?.remove();
  files?.cleanup();
});

const cases: { what: string; opts: Parameters<ProxyFiles['config']>[0]; field: RegExp }[] = [
  { what: 'an unknown field', opts: { extra: 'nftables:\n  bogusField: true' }, field: /nftables\.bogusField: unknown field/ },
  { what: 'an unknown top-level field', opts: { extra: 'masqueradeAll: true' }, field: /masqueradeAll: unknown field/ },
  { what: 'a wrong type', opts: { syncPeriod: '30' }, field: /nftables\.syncPeriod: / },
  { what: 'a wrong type (bool)', opts: { extra: 'bindAddressHardFail: "yes"' }, field: /bindAddressHardFail: must be true or false/ },
  { what: 'an invalid CIDR', opts: { clusterCIDR: '198.18.0.0/33' }, field: /clusterCIDR: "198\.18\.0\.0\/33" is not a CIDR/ },
];

describe('bad --config', () => {
  for (const { what, opts, field } of cases) {
    it(`${what}: exit 1, the field named, nothing programmed`, () => {
      // Duplicate keys are an error too; the extra lines replace a key the base file already has.
      const path = files.config({ ...opts, name: 'bad.yaml' });
      const file = opts?.extra?.startsWith('nftables:') ? writeNested(path) : path;
      const r = runProxy(ns, ['--config', file, '--node-ip', '198.18.0.1']);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(field);
      expect(r.stderr).toContain('bad.yaml');
      expect(tables(ns).filter((t) => t.includes('kube-proxy'))).toEqual([]);
    });
  }

  it('the good file next to them starts (sanity: the failures are the fields, not the file)', () => {
    const r = runProxy(ns, ['--config', files.config({ name: 'good.yaml' }), '--write-config-to', `${files.dir}/out.yaml`]);
    expect(r.code, r.stderr).toBe(0);
  });
});

/** Puts `nftables:\n  bogusField` into the file's existing nftables block (a second block would be a duplicate key). */
function writeNested(path: string): string {
  const text = readFileSync(path, 'utf8').replace(/\nnftables:\n  bogusField: true\n?/, '\n').replace('\nnftables:\n', '\nnftables:\n  bogusField: true\n');
  writeFileSync(path, text);
  return path;
}
