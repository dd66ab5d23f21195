// A manifest source never turns a failure to read into deletions, and keeps following its files
// (issue 31 item 5): a re-read that hits EMFILE (fds exhausted, as 1,100 connections held on the
// healthz port did) keeps every object and applies the change once fds are free, without another
// file event; a root that is gone for a moment keeps its objects; the watch follows a directory
// replaced by rename, a ConfigMap volume's "..data" symlink swap and a swapped symlink root; only
// files whose stat changed are read again; a first read that cannot read something fails start().

import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';
import { recorder, until, type Recorder } from './recorder.js';

/** Every file the source opens (to read it), by path: which files a re-read reads again. */
const reads = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...fs,
    open: ((path: Parameters<typeof fs.open>[0], ...rest: unknown[]) => {
      reads.push(String(path));
      return (fs.open as (...a: unknown[]) => unknown)(path, ...rest);
    }) as typeof fs.open,
  };
});

let base: string;
let source: ManifestSource | undefined;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'nftlink-manifest-resilience-'));
  reads.length = 0;
});
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rm(base, { recursive: true, force: true });
});

const service = (name: string, port = 80) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { clusterIP: '198.18.0.10', ports: [{ name: 'http', port }] } });

async function watching(root: string): Promise<Recorder> {
  const r = recorder();
  source = new ManifestSource(root, { debounceMs: 10, retryInitialMs: 100 });
  await source.start(r);
  return r;
}

const deletions = (r: Recorder): string[] => r.events.filter((e) => e.startsWith('delete'));

/** This process's soft and hard RLIMIT_NOFILE. */
function nofileLimits(): [string, string] {
  const out = execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--output=SOFT,HARD', '--noheadings'], { encoding: 'utf8' });
  const [soft, hard] = out.trim().split(/\s+/);
  return [soft!, hard!];
}

describe('failures to read keep the last good objects', () => {
  it('EMFILE during a re-read deletes nothing, and the change applies once fds are free, with no further file event', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    await writeFile(join(root, 'a.json'), service('a'));
    await writeFile(join(root, 'b.json'), service('b'));
    const r = await watching(root);
    expect(r.events).toEqual(['add a 80', 'add b 80']);
    await writeFile(join(base, 'a-next.json'), service('a', 81));

    // Exhaust this process's fds (as the trial's 1,100 held connections did at a limit of 1,024),
    // then change a file: the rename needs no fd, the re-read's directory listing does.
    const [soft, hard] = nofileLimits();
    const open = readdirSync('/proc/self/fd').length;
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${open + 16}:${hard}`]);
    const held: number[] = [];
    try {
      try {
        for (;;) held.push(openSync('/dev/null', 'r'));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('EMFILE');
      }
      await rename(join(base, 'a-next.json'), join(root, 'a.json'));
      await until(() => r.problems.some((p) => /EMFILE/.test(p.reason)), 'the EMFILE reported');
      // Give the failed read time to turn into deletions, as it did.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(deletions(r)).toEqual([]);
    } finally {
      for (const fd of held) closeSync(fd);
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${soft}:${hard}`]);
    }
    // The directory listing, or (when an fd came free meanwhile) the file: either way, named.
    expect([root, join(root, 'a.json')]).toContain(r.problems.find((p) => /EMFILE/.test(p.reason))!.origin);
    // No file event from here on: the retry alone reads the change.
    await until(() => r.events.includes('update a 81'), 'the change applied by the retry');
    expect(deletions(r)).toEqual([]);
  });

  it('a root that is gone for a moment keeps its objects; what appears at its path then applies', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    await writeFile(join(root, 'a.json'), service('a'));
    const r = await watching(root);
    await rm(root, { recursive: true });
    await until(() => r.problems.some((p) => p.origin === root && /ENOENT/.test(p.reason)), 'the missing root reported');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(deletions(r)).toEqual([]);
    await mkdir(join(base, 'staged'));
    await writeFile(join(base, 'staged', 'a.json'), service('a', 81));
    await rename(join(base, 'staged'), root);
    await until(() => r.events.includes('update a 81'), 'the new root read');
    expect(deletions(r)).toEqual([]);
  });

  it('a YAML file caught half-written where it still parses deletes nothing and updates nothing until it is complete', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    const file = join(root, 'services.yaml');
    const yaml = (port: number): string => ['a', 'b', 'c'].map((n) => `kind: Service\napiVersion: v1\nmetadata: {name: ${n}, namespace: default}\nspec:\n  clusterIP: 198.18.0.1${n.charCodeAt(0) - 97}\n  ports:\n  - {name: http, port: ${port}}\n`).join('---\n');
    await writeFile(file, yaml(80));
    const r = await watching(root);
    expect(r.events).toEqual(['add a 80', 'add b 80', 'add c 80']);
    // Cut inside the second document, in a plain scalar: "clusterIP: 198.18" parses (as a number).
    const next = yaml(81);
    await writeFile(file, next.slice(0, next.indexOf('198.18.0.11') + 'clusterIP: 198.18'.length - 'clusterIP: '.length));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(r.events).toEqual(['add a 80', 'add b 80', 'add c 80']);
    await writeFile(file, next);
    await until(() => r.events.includes('update c 81'), 'the completed file');
    expect(deletions(r)).toEqual([]);
    expect(r.problems).toEqual([]);
  });

  it('a file caught emptied (a writer truncates before it writes) deletes nothing', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    await writeFile(join(root, 'a.yaml'), `${service('a')}\n`);
    await writeFile(join(root, 'b.json'), service('b'));
    const r = await watching(root);
    await writeFile(join(root, 'a.yaml'), '');
    await writeFile(join(root, 'b.json'), '');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(deletions(r)).toEqual([]);
    await writeFile(join(root, 'a.yaml'), `${service('a', 81)}\n`);
    await until(() => r.events.includes('update a 81'), 'the rewritten file');
    expect(deletions(r)).toEqual([]);
  });

  it('a YAML file without a line break at its end: read at once when new; when read before, once it has not changed for a while', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    const yaml = (port: number): string => `kind: Service\nmetadata: {name: a, namespace: default}\nspec: {clusterIP: 198.18.0.10, ports: [{port: ${port}}]}`;
    await writeFile(join(root, 'a.yaml'), yaml(80));
    const r = recorder();
    source = new ManifestSource(root, { debounceMs: 10, retryInitialMs: 100, unfinishedYamlSettleMs: 500 });
    await source.start(r);
    expect(r.events).toEqual(['add a 80']);
    const changed = Date.now();
    await writeFile(join(root, 'a.yaml'), yaml(81));
    await until(() => r.events.includes('update a 81'), 'a read after it settled');
    expect(Date.now() - changed).toBeGreaterThanOrEqual(500);
  });

  it('a first read that cannot read a file fails start(), naming it', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    await writeFile(join(root, 'a.json'), service('a'));
    await symlink('loop.yaml', join(root, 'loop.yaml')); // stat: ELOOP
    source = new ManifestSource(root, { debounceMs: 10 });
    await expect(source.start(recorder())).rejects.toThrow(`manifest source ${root}: cannot read ${join(root, 'loop.yaml')}: ELOOP`);
  });

  it('a re-read reads only the files whose stat changed', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    await writeFile(join(root, 'a.json'), service('a'));
    await writeFile(join(root, 'b.json'), service('b'));
    const r = await watching(root);
    await until(() => reads.length >= 2, 'the first read');
    reads.length = 0;
    await writeFile(join(root, 'b.json'), service('b', 81));
    await until(() => r.events.includes('update b 81'), 'b re-read');
    expect(new Set(reads)).toEqual(new Set([join(root, 'b.json')]));
  });
});

describe('the watch follows the directory', () => {
  it('a manifest directory replaced by rename: its content applies, and later changes in it too', async () => {
    const root = join(base, 'manifests');
    await mkdir(root);
    await writeFile(join(root, 'a.json'), service('a'));
    const r = await watching(root);
    await mkdir(join(base, 'next'));
    await writeFile(join(base, 'next', 'b.json'), service('b'));
    await rename(root, join(base, 'old'));
    await rename(join(base, 'next'), root);
    await until(() => r.events.includes('add b 80') && r.events.includes('delete a'), 'the new directory read');
    await writeFile(join(root, 'c.json'), service('c'));
    await until(() => r.events.includes('add c 80'), 'a file written into the new directory');
    // The old directory is no longer watched.
    await writeFile(join(base, 'old', 'd.json'), service('d'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.events).not.toContain('add d 80');
    expect(deletions(r)).toEqual(['delete a']);
  });

  it("a ConfigMap volume's ..data symlink swapped atomically", async () => {
    const root = join(base, 'configmap');
    await mkdir(join(root, '..2026_12_06_01_00_00.1'), { recursive: true });
    await writeFile(join(root, '..2026_12_06_01_00_00.1', 'services.json'), service('a'));
    await symlink('..2026_12_06_01_00_00.1', join(root, '..data'));
    await symlink('..data/services.json', join(root, 'services.json'));
    const r = await watching(root);
    expect(r.events).toEqual(['add a 80']);
    // As the kubelet's AtomicWriter: a new timestamped directory, a new ..data_tmp link renamed over ..data, the old directory removed.
    await mkdir(join(root, '..2026_12_06_01_05_00.2'));
    await writeFile(join(root, '..2026_12_06_01_05_00.2', 'services.json'), service('a', 81));
    await symlink('..2026_12_06_01_05_00.2', join(root, '..data_tmp'));
    await rename(join(root, '..data_tmp'), join(root, '..data'));
    await rm(join(root, '..2026_12_06_01_00_00.1'), { recursive: true });
    await until(() => r.events.includes('update a 81'), 'the swapped content');
    expect(deletions(r)).toEqual([]);
  });

  it('a symlink root swapped to another directory: its content applies, and later changes in it too', async () => {
    await mkdir(join(base, 'v1'));
    await writeFile(join(base, 'v1', 'a.json'), service('a'));
    await mkdir(join(base, 'v2'));
    await writeFile(join(base, 'v2', 'a.json'), service('a', 81));
    const root = join(base, 'current');
    await symlink('v1', root);
    const r = await watching(root);
    await symlink('v2', join(base, 'next'));
    await rename(join(base, 'next'), root);
    await until(() => r.events.includes('update a 81'), 'the swapped root read');
    await writeFile(join(base, 'v2', 'b.json'), service('b'));
    await until(() => r.events.includes('add b 80'), 'a file written into the new target');
    expect(deletions(r)).toEqual([]);
  });
});
