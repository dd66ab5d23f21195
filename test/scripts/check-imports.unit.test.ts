// scripts/check-imports.mjs, which scripts/test.sh runs before the tests: on small source trees in
// a temporary directory, it passes imports that go one way and names the files of a cycle, of an
// import against the allowed direction and of a deep import into the library.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '../../scripts/check-imports.mjs');

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A src/ tree of the given files (path relative to src -> content). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'check-imports-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('check-imports', () => {
  it('passes imports that go down the layers, through the library entry', () => {
    const root = tree({
      'cli/main.ts': "import { Proxier } from '../proxy/proxier.js';\nimport { pinoLogger } from '../logging/pino-logger.js';\n",
      'proxy/proxier.ts': "import { Nftables } from '../nft/index.js';\nimport type { Service } from '../k8s/objects.js';\nexport class Proxier {}\n",
      'k8s/objects.ts': "import type { Logger } from '../logging/logger.js';\nexport interface Service {}\n",
      'nft/index.ts': "export * from './client.js';\n",
      'nft/client.ts': "import { loadNative } from '../native/binding.js';\nexport class Nftables {}\n",
      'native/binding.ts': 'export function loadNative(): void {}\n',
      'logging/logger.ts': 'export interface Logger {}\n',
      'logging/pino-logger.ts': "import type { Logger } from './logger.js';\n",
    });
    expect(check(root)).toEqual({ status: 0, output: 'check-imports: ok\n' });
  });

  it('fails on a cycle between two folders, naming the imports in both directions', () => {
    const root = tree({
      'k8s/reflector.ts': "import type { EventType } from '../proxy/source/source.js';\n",
      'proxy/source/source.ts': "import type {\n  Service,\n} from '../../k8s/objects.js';\nexport type EventType = 'add';\n",
      'k8s/objects.ts': 'export interface Service {}\n',
    });
    const { status, output } = check(root);
    expect(status).toBe(1);
    expect(output).toContain('cycle between k8s, proxy:');
    expect(output).toContain('k8s/reflector.ts -> proxy/source/source.ts');
    expect(output).toContain('proxy/source/source.ts -> k8s/objects.ts');
  });

  it('fails on an import against the allowed direction, and on a deep import into the library', () => {
    const root = tree({
      'k8s/config.ts': "import { LAYOUT } from '../proxy/layout.js';\n",
      'proxy/layout.ts': "import { parsePrefix } from '../nft/types/address.js';\nexport const LAYOUT = 1;\n",
      'nft/types/address.ts': 'export function parsePrefix(): void {}\n',
      'nft/index.ts': "export * from './types/address.js';\n",
    });
    const { status, output } = check(root);
    expect(status).toBe(1);
    expect(output).toContain('k8s/config.ts -> proxy/layout.ts: "k8s" may not import "proxy"');
    expect(output).toContain('proxy/layout.ts -> nft/types/address.ts: outside the library, import nft/index.ts');
    expect(output).not.toContain('cycle');
  });
});
