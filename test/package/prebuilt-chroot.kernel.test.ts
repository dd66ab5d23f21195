// The packed library on a machine with no compiler: scripts/check-prebuilt-chroot.sh packs it
// (building the prebuilt addon), installs the tarball with npm in a Debian bookworm minbase root
// filesystem that has Node but no compiler, python3, pkg-config, libnftnl or libmnl, and there
// imports 'nftlink' and commits a transaction in a fresh network namespace of its own (unshare
// --net: the kernel removes it when the process ends). Needs root (it fails without, never skips).
// The first run on a machine makes the root filesystem (debootstrap, about a minute); later runs
// copy it.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '../../scripts/check-prebuilt-chroot.sh');

it('npm install of the packed library needs no compiler, loads the prebuilt addon and commits in a namespace', () => {
  const r = spawnSync('bash', [SCRIPT], { encoding: 'utf8', timeout: 12 * 60_000 });
  const out = r.stdout;
  expect(r.status, `${out}\n${r.stderr}`).toBe(0);
  expect(out).toContain('no compiler, python3, pkg-config, libnftnl or libmnl');
  // Only the library and its own two dependencies: none of the proxy's.
  expect(out).toMatch(/^check-prebuilt: installed 3 packages: nftlink node-addon-api node-gyp-build$/m);
  expect(out).not.toMatch(/pino|prom-client|@kubernetes|yaml/);
  expect(out).toContain('check-prebuilt: addon: /app/node_modules/nftlink/prebuilds/linux-x64/nftlink.glibc.node');
  expect(out).toMatch(/table inet prebuilt_check \{[\s\S]*type filter hook input priority (?:filter|0); policy accept;/);
  expect(out).toMatch(/^check-prebuilt: ok$/m);
}, 13 * 60_000);
