// The Node.js flags nftlink runs with: those on the first line of bin/nftlink.js
// (`#!/usr/bin/env -S node FLAGS`), which every way of starting it goes through. The benchmark
// starts its measured proxy processes with them, so that its memory figures are the proxy's.

import { readFileSync } from 'node:fs';
import { BIN } from '../src/netns/proxy-process.js';

export function nodeFlags(): string[] {
  const first = readFileSync(BIN, 'utf8').split('\n', 1)[0]!;
  const m = /^#!\/usr\/bin\/env -S node(?<flags>( --[\w=-]+)*)$/.exec(first);
  if (!m) throw new Error(`nftlink: ${BIN}: the first line is not "#!/usr/bin/env -S node [--flag ...]"`);
  return m.groups!.flags!.trim().split(/\s+/).filter(Boolean);
}
