// `nftlink proxy --config FILE` with a bad KubeProxyConfiguration: exit code 1, an error that names
// the field, and nothing programmed (no kube-proxy table in the namespace it runs in). A file only
// strict decoding refuses loads as kube-proxy loads it, with the strict errors logged.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Netns } from '../helpers/netns.js';
import { ProxyFiles, ProxyProcess, runProxy, tables, until } from './harness.js';

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
  { what: 'a wrong type', opts: { syncPeriod: '30' }, field: /nftables\.syncPeriod: / },
  { what: 'a wrong type (bool)', opts: { extra: 'bindAddressHardFail: "yes"' }, field: /bindAddressHardFail: must be true or false/ },
  { what: 'an invalid CIDR', opts: { clusterCIDR: '198.18.0.0/33' }, field: /clusterCIDR: "198\.18\.0\.0\/33" is not a CIDR/ },
];

describe('bad --config', () => {
  for (const { what, opts, field } of cases) {
    it(`${what}: exit 1, the field named, nothing programmed`, () => {
      const file = files.config({ ...opts, name: 'bad.yaml' });
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

describe('a --config file only strict decoding refuses (kube-proxy decodes it leniently)', () => {
  it('unknown fields (one kept from an older release) are logged with their path, and the proxy starts', () => {
    const file = writeNested(files.config({ extra: 'udpIdleTimeout: 250ms\nnftables:\n  bogusField: true', name: 'lenient.yaml' }));
    // --init-only: kube-proxy's privileged set-up, then exit 0 (nothing programmed).
    const r = runProxy(ns, ['--config', file, '--node-ip', '198.18.0.1', '--init-only']);
    expect(r.code, r.stderr).toBe(0);
    const lenient = r.stderr.split('\n').filter((l) => l.includes('using lenient decoding'));
    expect(lenient.map((l) => (JSON.parse(l) as { error: string }).error)).toEqual([
      expect.stringMatching(/lenient\.yaml: nftables\.bogusField: unknown field$/),
      expect.stringMatching(/lenient\.yaml: udpIdleTimeout: unknown field$/),
    ]);
    expect(r.stderr).toContain('--init-only given: exiting');
    // kube-proxy's default oomScoreAdj, applied to the proxy process itself: set, or (without
    // CAP_SYS_RESOURCE, as in an unprivileged sandbox's root) a warning, never a failure.
    const oom = r.stderr.split('\n').find((l) => l.includes('oom_score_adj'));
    const line = JSON.parse(oom ?? '{}') as { msg?: string; to?: number; value?: number };
    expect(line.msg === 'set oom_score_adj' ? line.to : line.msg === 'cannot set oom_score_adj' ? line.value : undefined).toBe(-999);
    expect(tables(ns).filter((t) => t.includes('kube-proxy'))).toEqual([]);
  });
});


describe('a --config file that changes', () => {
  it('ends the proxy (exit 1, logged) so that it restarts with the new file, as kube-proxy', async () => {
    const own = Netns.create('nle2ew');
    const manifests = new URL('../fixtures/proxy/basic', import.meta.url).pathname;
    const file = files.config({ name: 'watched.yaml' });
    const proxy = ProxyProcess.start(own, ['--config', file, '--manifests', manifests, '--node-ip', '198.18.0.1']);
    try {
      await until('the first sync', () => tables(own).includes('ip kube-proxy'), 15_000, () => proxy.raw);
      // The same bytes written again change nothing.
      writeFileSync(file, readFileSync(file, 'utf8'));
      await new Promise((r) => setTimeout(r, 2500));
      expect(proxy.child.exitCode).toBeNull();
      appendFileSync(file, 'oomScoreAdj: -998\n');
      const exit = await Promise.race([proxy.exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
      expect(exit?.code, proxy.raw).toBe(1);
      expect(proxy.logs('the --config file changed; exiting so that the proxy restarts with it')).toHaveLength(1);
    } finally {
      await proxy.stop();
      own.remove();
    }
  }, 40_000);
});

describe('--bind-address-hard-fail', () => {
  it('a server that cannot bind ends the proxy with exit 1 and the reason, where it is otherwise retried', () => {
    const own = Netns.create('nle2ef');
    try {
      const manifests = new URL('../fixtures/proxy/basic', import.meta.url).pathname;
      // Both servers on one address and port: the second cannot bind (EADDRINUSE).
      const args = ['--manifests', manifests, '--node-ip', '198.18.0.1', '--healthz-bind-address', '127.0.0.1:10999', '--metrics-bind-address', '127.0.0.1:10999'];
      const r = runProxy(own, [...args, '--bind-address-hard-fail']);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/"reason":"[^"]*EADDRINUSE[^"]*".*"msg":"cannot start server; exiting \(bindAddressHardFail\)"/);
    } finally {
      own.remove();
    }
  });
});

/** Puts `nftables:\n  bogusField` into the file's existing nftables block (a second block would be a duplicate key). */
function writeNested(path: string): string {
  const text = readFileSync(path, 'utf8').replace(/\nnftables:\n  bogusField: true\n?/, '\n').replace('\nnftables:\n', '\nnftables:\n  bogusField: true\n');
  writeFileSync(path, text);
  return path;
}
