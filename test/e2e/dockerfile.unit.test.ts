// The Dockerfile, checked without a Docker engine (CI has none, so the image is not built there;
// scripts/docker-smoke.sh builds and runs it where Docker is): every COPY source exists in the build
// context or in what the build stage produces, the runtime stage installs the shared libraries
// binding.gyp links (pkg-config list) and never nftables, the ENTRYPOINT runs bin/nftlink.js, and
// kube-proxy's command (/usr/local/bin/kube-proxy) runs `nftlink proxy`.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const text = readFileSync(`${root}Dockerfile`, 'utf8').replace(/\\\n/g, ' ');
interface Stage { from: string; name?: string; lines: string[] }
const stages: Stage[] = [];
/** The global ARGs before the first FROM, with their defaults (the base images). */
const args = new Map<string, string>();
const withArgs = (s: string): string => s.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? `\${${name}}`);
for (const raw of text.split('\n')) {
  const line = raw.trim();
  if (!line || line.startsWith('#')) continue;
  const arg = /^ARG\s+(\w+)=(\S+)$/i.exec(line);
  if (arg && stages.length === 0) {
    args.set(arg[1]!, arg[2]!);
    continue;
  }
  const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
  if (from) stages.push({ from: withArgs(from[1]!), ...(from[2] ? { name: from[2] } : {}), lines: [] });
  else stages.at(-1)!.lines.push(line);
}
const [build, runtime] = stages as [Stage, Stage];
const copies = (s: Stage) => s.lines.filter((l) => l.startsWith('COPY ')).map((l) => {
  const parts = l.split(/\s+/).slice(1);
  const from = parts[0]!.startsWith('--from=') ? parts.shift()!.slice(7) : undefined;
  return { from, sources: parts.slice(0, -1), dest: parts.at(-1)! };
});
const aptPackages = (s: Stage): string[] => s.lines.filter((l) => l.startsWith('RUN ') && l.includes('apt-get install')).flatMap((l) => l.split('apt-get install')[1]!.split('&&')[0]!.split(/\s+/).filter((w) => w && !w.startsWith('-')));
/** Debian bookworm's runtime package of each pkg-config module. */
const RUNTIME_PACKAGE: Record<string, string> = { libnftnl: 'libnftnl11', libmnl: 'libmnl0' };
const DEV_PACKAGE: Record<string, string> = { libnftnl: 'libnftnl-dev', libmnl: 'libmnl-dev' };
const gypModules = [...readFileSync(`${root}binding.gyp`, 'utf8').matchAll(/pkg-config --(?:libs|cflags)((?: [a-z0-9_-]+)+)\)/g)].flatMap((m) => m[1]!.trim().split(/\s+/));

describe('Dockerfile', () => {
  it('has a build stage and a slim runtime stage on the Node major scripts/setup.sh installs', () => {
    const major = /^NFTLINK_NODE_VERSION=(\d+)\./m.exec(readFileSync(`${root}scripts/node-env.sh`, 'utf8'))?.[1];
    expect(major).toBeDefined();
    expect(stages).toHaveLength(2);
    expect(build.from).toMatch(new RegExp(`^node:${major}-`));
    expect(runtime.from).toMatch(new RegExp(`^node:${major}-.*slim$`));
  });

  it('every COPY source of the build stage exists in the build context', () => {
    for (const c of copies(build)) for (const s of c.sources) expect(existsSync(`${root}${s}`), s).toBe(true);
  });

  it('every COPY --from=build source is something the build produces', () => {
    // What the build stage's steps leave in /src: the context copies, npm ci's node_modules,
    // node-gyp's build/Release (npm ci runs the install script, node-gyp-build, which compiles
    // because the context has no prebuilds/), tsc's dist.
    const inBuild = new Set(copies(build).flatMap((c) => c.sources.map((s) => `/src/${s.replace(/\/$/, '')}`)));
    const produced = ['/src/node_modules', '/src/dist', '/src/build/Release/nftlink.node'];
    for (const c of copies(runtime)) {
      expect(c.from).toBe(build.name);
      for (const s of c.sources) expect(inBuild.has(s) || produced.includes(s), s).toBe(true);
    }
    expect(build.lines.some((l) => /npm ci\b/.test(l) && !l.includes('--ignore-scripts'))).toBe(true);
    expect(build.lines.some((l) => l.includes('npm run build:ts'))).toBe(true);
    // Locally the same outputs exist after `npm run build`: the paths are right.
    for (const p of produced) expect(existsSync(p.replace('/src/', root)), p).toBe(true);
    expect(JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts.install).toBe('node-gyp-build');
  });

  it('the runtime stage installs exactly the libraries binding.gyp links, and never nftables', () => {
    expect(gypModules.length).toBeGreaterThan(0);
    const runtimePkgs = aptPackages(runtime);
    const wanted = [...new Set(gypModules)].map((m) => {
      const pkg = RUNTIME_PACKAGE[m];
      if (!pkg) throw new Error(`binding.gyp links ${m}: which Debian runtime package has it? (add it to the Dockerfile's runtime stage and to this table)`);
      return pkg;
    });
    expect(runtimePkgs.sort()).toEqual(wanted.sort());
    for (const m of new Set(gypModules)) expect(aptPackages(build)).toContain(DEV_PACKAGE[m]);
    expect(runtimePkgs.some((p) => p === 'nftables' || p.startsWith('iptables'))).toBe(false);
  });

  it('the ENTRYPOINT runs bin/nftlink.js, which the runtime stage has', () => {
    const ep = runtime.lines.find((l) => l.startsWith('ENTRYPOINT '))!;
    expect(JSON.parse(ep.slice('ENTRYPOINT '.length))).toEqual(['/app/bin/nftlink.js']);
    // Run as a file, it starts node itself with the proxy's flags (its first line).
    expect(readFileSync(new URL('../../bin/nftlink.js', import.meta.url), 'utf8')).toMatch(/^#!\/usr\/bin\/env -S node --/);
    expect(statSync(new URL('../../bin/nftlink.js', import.meta.url)).mode & 0o111).toBe(0o111);
    expect(copies(runtime).some((c) => c.sources.includes('/src/bin') && c.dest === './bin')).toBe(true);
    expect(runtime.lines).toContain('WORKDIR /app');
  });

  it("kube-proxy's command is there too: /usr/local/bin/kube-proxy runs `nftlink proxy` with its arguments", () => {
    expect(runtime.lines).toContain('RUN ln -s /app/bin/kube-proxy /usr/local/bin/kube-proxy');
    // The wrapper, run through a symlink elsewhere (as in the image), finds nftlink.js beside itself.
    const dir = mkdtempSync(join(tmpdir(), 'nftlink-kp-'));
    try {
      symlinkSync(fileURLToPath(new URL('../../bin/kube-proxy', import.meta.url)), join(dir, 'kube-proxy'));
      const r = spawnSync(join(dir, 'kube-proxy'), ['--version'], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^nftlink v\d+\.\d+\.\d+ \(kube-proxy's nftables mode\)$/m);
      const bad = spawnSync(join(dir, 'kube-proxy'), ['--proxy-mode=ipvs', '--write-config-to=/dev/null'], { encoding: 'utf8' });
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain('--proxy-mode: "ipvs" is not supported');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
