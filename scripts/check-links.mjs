// Checks that every relative link in README.md and docs/**/*.md resolves: the file exists, and a
// #fragment names a heading of that Markdown file (GitHub's anchors: lower case, punctuation
// dropped, spaces to dashes). Exits 1 listing the broken ones. Run by scripts/test.sh.
// Hand-written rather than a dependency: the rules fit in a page and need no network.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** GitHub's anchor for a heading's text. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file) {
  const seen = new Map();
  const out = new Set();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

function markdownFiles(root) {
  const out = [];
  if (existsSync(join(root, 'README.md'))) out.push(join(root, 'README.md'));
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(root, 'docs'));
  return out;
}

/** Broken links under `root`, as "file: link (reason)". */
export function brokenLinks(root) {
  const broken = [];
  for (const file of markdownFiles(root)) {
    let fenced = false;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.startsWith('```')) fenced = !fenced;
      if (fenced) continue;
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1];
        if (/^[a-z]+:/i.test(link)) continue; // http:, https:, mailto:
        const [path, fragment] = link.split('#');
        const target = path ? resolve(dirname(file), path) : file;
        const where = `${relative(root, file)}: ${link}`;
        if (!existsSync(target)) broken.push(`${where} (no such file)`);
        else if (fragment && statSync(target).isFile() && target.endsWith('.md') && !anchorsOf(target).has(fragment)) broken.push(`${where} (no such heading)`);
      }
    }
  }
  return broken;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..');
  const broken = brokenLinks(root);
  if (broken.length) {
    console.error(`check-links: ${broken.length} broken link(s):\n  ${broken.join('\n  ')}`);
    process.exit(1);
  }
  console.log('check-links: ok');
}
