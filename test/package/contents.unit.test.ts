// What `npm install nftlink` gets (package.json "files", "dependencies", "exports"), read from
// `npm pack --dry-run` over the built dist/: the library alone, lean. Every module and type file the
// package ships resolves inside the package or to a dependency it declares; the proxy's
// dependencies (the nftlink-proxy workspace's) are neither declared nor imported; the addon loads
// through node-gyp-build, with the source build as the install script's fallback.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  exports: Record<string, { types: string; default: string }>;
  scripts: Record<string, string>;
  workspaces: string[];
  bin?: unknown;
};
const proxyPkg = JSON.parse(readFileSync(join(root, 'proxy/package.json'), 'utf8')) as {
  name: string;
  private: boolean;
  dependencies: Record<string, string>;
};

/** The files `npm pack` would put in the tarball (prepack not run: dist/ is the current build). */
function packedFiles(): string[] {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
}

/** Specifiers a module or declaration file imports (static, dynamic, export-from). */
function imports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
    found.push((m[1] ?? m[2] ?? m[3])!);
  }
  return found;
}

const packageName = (spec: string): string => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

describe('the npm package', () => {
  it('is built (scripts/test.sh builds dist/ before the tests)', () => {
    for (const entry of Object.values(pkg.exports)) {
      expect(existsSync(join(root, entry.default)), entry.default).toBe(true);
      expect(existsSync(join(root, entry.types)), entry.types).toBe(true);
    }
  });

  it("declares only the library's dependencies; the proxy's belong to the nftlink-proxy workspace", () => {
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['node-addon-api', 'node-gyp-build']);
    expect(pkg.workspaces).toEqual(['proxy']);
    expect(proxyPkg.private).toBe(true);
    for (const dep of ['@kubernetes/client-node', 'pino', 'prom-client', 'yaml']) {
      expect(Object.keys(proxyPkg.dependencies)).toContain(dep);
      expect(Object.keys(pkg.dependencies)).not.toContain(dep);
    }
    // No CLI in the library package: bin/nftlink.js runs the proxy, whose dependencies it lacks.
    expect(pkg.bin).toBeUndefined();
  });

  it('ships every file its modules and types import, and imports nothing but node: and its dependencies', () => {
    const files = packedFiles();
    const shipped = new Set(files);
    for (const entry of Object.values(pkg.exports)) {
      expect(shipped.has(normalize(entry.default)), entry.default).toBe(true);
      expect(shipped.has(normalize(entry.types)), entry.types).toBe(true);
    }
    const modules = files.filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'));
    expect(modules.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const file of modules) {
      for (const spec of imports(readFileSync(join(root, file), 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = normalize(join(dirname(file), spec));
          const candidates = file.endsWith('.d.ts') ? [target.replace(/\.js$/, '.d.ts'), target] : [target];
          if (!candidates.some((c) => shipped.has(c))) problems.push(`${file}: ${spec} is not in the package`);
        } else if (!spec.startsWith('node:') && !builtinModules.includes(spec) && !(packageName(spec) in pkg.dependencies)) {
          problems.push(`${file}: imports ${spec}, not a dependency`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('loads the addon with node-gyp-build: a prebuilt one when it fits, else the install script builds it', () => {
    expect(pkg.scripts.install).toBe('node-gyp-build');
    expect(pkg.scripts.prepack).toContain('scripts/build-prebuilt.sh');
    const files = packedFiles();
    expect(files).toContain('binding.gyp');
    expect(files.filter((f) => f.startsWith('native/') && f.endsWith('.cc')).length).toBeGreaterThan(0);
    expect(readFileSync(join(root, 'src/native/binding.ts'), 'utf8')).toMatch(/require\("node-gyp-build"\)/);
  });
});
