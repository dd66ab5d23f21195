// The --config watch: a change of the file's bytes (written in place, or a ConfigMap volume's
// symlink swap) is reported once; a rewrite with the same bytes is not.

import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { watchConfigFile } from '../../src/cli/config-watch.js';

const dir = mkdtempSync(join(tmpdir(), 'nftlink-cfgwatch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('reports a change of content once, and ignores a rewrite of the same bytes', async () => {
  const path = join(dir, 'config.conf');
  writeFileSync(path, 'a: 1\n');
  let calls = 0;
  const stop = watchConfigFile(path, 'a: 1\n', () => calls++, 20);
  await sleep(60);
  writeFileSync(path, 'a: 1\n');
  await sleep(300);
  expect(calls).toBe(0);
  writeFileSync(path, 'a: 2\n');
  await sleep(300);
  writeFileSync(path, 'a: 3\n');
  await sleep(300);
  expect(calls).toBe(1);
  stop();
});

it("follows a ConfigMap volume's update: the ..data symlink swapped to a new directory", async () => {
  // kubelet's atomic writer: config.conf -> ..data/config.conf, ..data -> ..2026_a; an update writes
  // ..2026_b and renames a new ..data link over the old one.
  const vol = join(dir, 'volume');
  mkdirSync(join(vol, '..2026_a'), { recursive: true });
  writeFileSync(join(vol, '..2026_a', 'config.conf'), 'mode: nftables\n');
  symlinkSync('..2026_a', join(vol, '..data'));
  symlinkSync(join('..data', 'config.conf'), join(vol, 'config.conf'));
  let calls = 0;
  const stop = watchConfigFile(join(vol, 'config.conf'), 'mode: nftables\n', () => calls++, 20);
  await sleep(60);
  mkdirSync(join(vol, '..2026_b'));
  writeFileSync(join(vol, '..2026_b', 'config.conf'), 'mode: nftables\nclusterCIDR: 198.18.0.0/16\n');
  symlinkSync('..2026_b', join(vol, '..data_tmp'));
  renameSync(join(vol, '..data_tmp'), join(vol, '..data'));
  rmSync(join(vol, '..2026_a'), { recursive: true });
  await sleep(300);
  expect(calls).toBe(1);
  stop();
});
