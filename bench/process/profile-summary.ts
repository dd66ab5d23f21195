// Where the time of one profiled process goes: reads a V8 .cpuprofile (`node --cpu-prof`) and sums
// the main thread's samples by category: module loading (per package), GC, idle (the main thread
// waiting: for the kernel's commit on the addon's worker, for file reads), and the proxy's stages,
// told by the innermost frame on the stack that a rule names. Prints the categories, a timeline (the
// dominant category of each slice of the run) and the functions with the most self time.
//
//   node dist-bench/bench/process/profile-summary.js FILE.cpuprofile [--slice-ms 100] [--top 30]
//
// The rules match function names and files of the bundled build (dist/bundle/: one file, so the
// function name is what tells the stages apart); a stage renamed in src/ needs its rule here.

import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * A stage of the proxy. The stack is walked from the innermost frame out, and the first frame that
 * a rule names decides: the rules name the entry function of each stage, which are nested (the
 * manifests are read, the tracker fed, the model snapshot, the layout planned; the plan's parts are
 * committed, each rendered for the trace log first), so the innermost named one is the stage the
 * sample's work belongs to. Generic names (update, get, parse) are left out: they occur everywhere.
 */
export interface Rule {
  category: string;
  fn?: RegExp;
  url?: RegExp;
}

const OWN = /\/dist(-bench)?\/|\/bin\//;
export const RULES: readonly Rule[] = [
  { category: 'logging (pino)', url: /node_modules\/(pino|sonic-boom|thread-stream|pino-std-serializers)\// },
  { category: 'metrics (prom-client)', url: /node_modules\/prom-client\// },
  { category: 'rendering each part as nft text (for the trace log)', fn: /^(render|renderCommands|renderOperation)$/, url: OWN },
  { category: 'commit: encoding, handing parts to the addon', fn: /^(commit|commitPart|commitStream\w*|send|encode)$/, url: OWN },
  { category: 'settle: keying the elements written unkeyed', fn: /^settle$/, url: OWN },
  { category: 'layout: planning the ruleset (chains, rules, maps, elements)', fn: /^(planFull|planPartial|prepare\w*|flush|cut|fragment|writeChains?|queueElements|declare|base|baseObjects|sharedSets)$/, url: OWN },
  { category: 'model: snapshot (service ports, merged endpoints)', fn: /^(snapshot|rebuildFamily)$/, url: OWN },
  { category: 'model: tracker events (validation, content hashes)', fn: /^(readAndEmit|emit)$/, url: OWN },
  { category: 'manifests: read, JSON/YAML parse, normalize', fn: /^(readManifestFile|readManifests|parseDocuments|collectObject|scanFiles?)$/, url: OWN },
  { category: 'manifests: read, JSON/YAML parse, normalize', url: /node_modules\/yaml\// },
  { category: 'sync: rest (reading the kernel back, diff)', fn: /^(sync|syncOnce|attempt|start)$/, url: OWN },
  { category: 'start-up: flags, config, system settings', fn: /^(proxyCommand|main|proxy)$/, url: OWN },
];

/** The package a script belongs to: node_modules/<pkg>, nftlink's own dist/, or node's internals. */
export function packageOf(url: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return 'node internals';
  if (/\/(dist|dist-bench|bin)\//.test(url)) return 'nftlink';
  return url ? 'other' : '(native)';
}

const MODULE_LOADING = /^node:internal\/(modules|vm)|^node:internal\/process\/(pre_execution|esm_loader)/;

/** The category of one sample's stack (leaf first). */
export function categorize(stack: readonly CallFrame[], rules: readonly Rule[] = RULES): string {
  const leaf = stack[0];
  if (!leaf) return '(unknown)';
  if (leaf.functionName === '(garbage collector)') return 'GC';
  if (leaf.functionName === '(idle)') return 'idle (waiting: kernel commit on the worker, I/O)';
  if (leaf.functionName === '(program)') return '(program: V8 compile, native, not attributed)';
  // A module's top-level code and the loader's work under it: module loading, by the package of
  // the innermost script on the stack.
  const loading = stack.some((f) => MODULE_LOADING.test(f.url));
  const topLevel = stack.findIndex((f) => f.functionName === '' && f.lineNumber === 0);
  if (loading) {
    const inner = topLevel >= 0 ? stack[topLevel]! : (stack.find((f) => f.url && !f.url.startsWith('node:')) ?? leaf);
    // Below a module's top level, a function call that is not itself loading is still loading
    // that module (its initialization): charged to the module's package.
    return `module loading: ${packageOf(inner.url)}`;
  }
  for (const frame of stack) {
    for (const r of rules) {
      if ((r.fn === undefined || r.fn.test(frame.functionName)) && (r.url === undefined || r.url.test(frame.url))) return r.category;
    }
  }
  return `other: ${packageOf(leaf.url)}`;
}

export interface Summary {
  totalMs: number;
  categories: { category: string; ms: number }[];
  timeline: { fromMs: number; category: string; share: number }[];
  topSelf: { fn: string; where: string; ms: number }[];
}

export function summarize(p: CpuProfile, sliceMs = 100, top = 30, rules: readonly Rule[] = RULES): Summary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): CallFrame[] => {
    const out: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (n.callFrame.functionName !== '(root)') out.push(n.callFrame);
    }
    return out;
  };
  const catCache = new Map<number, string>();
  const cats = new Map<string, number>();
  const self = new Map<string, { fn: string; where: string; ms: number }>();
  const slices = new Map<number, Map<string, number>>();
  let t = 0;
  // A sample's time is the delta to the next one (the last sample's: its own delta).
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    const ms = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000;
    t += (p.timeDeltas[i] ?? 0) / 1000;
    let cat = catCache.get(id);
    if (cat === undefined) {
      cat = categorize(stackOf(id), rules);
      catCache.set(id, cat);
    }
    cats.set(cat, (cats.get(cat) ?? 0) + ms);
    const slice = Math.floor(t / sliceMs);
    const sm = slices.get(slice) ?? new Map<string, number>();
    sm.set(cat, (sm.get(cat) ?? 0) + ms);
    slices.set(slice, sm);
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName}|${f.url}|${f.lineNumber}`;
    const e = self.get(key) ?? { fn: f.functionName || '(anonymous)', where: `${packageOf(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`, ms: 0 };
    e.ms += ms;
    self.set(key, e);
  }
  const totalMs = (p.endTime - p.startTime) / 1000;
  const timeline = [...slices.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, m]) => {
      const [category, ms] = [...m.entries()].sort((a, b) => b[1] - a[1])[0]!;
      return { fromMs: s * sliceMs, category, share: ms / sliceMs };
    });
  return {
    totalMs,
    categories: [...cats.entries()].map(([category, ms]) => ({ category, ms })).sort((a, b) => b.ms - a.ms),
    timeline,
    topSelf: [...self.values()].sort((a, b) => b.ms - a.ms).slice(0, top),
  };
}

export function renderSummary(s: Summary): string {
  const pct = (ms: number): string => `${((100 * ms) / s.totalMs).toFixed(1).padStart(5)}%`;
  const lines = [`profiled main thread: ${s.totalMs.toFixed(0)} ms (from the profile's start: node's own start-up before it is not in it)`, '', 'by category:'];
  for (const c of s.categories) lines.push(`  ${c.ms.toFixed(0).padStart(6)} ms ${pct(c.ms)}  ${c.category}`);
  lines.push('', 'timeline (dominant category per slice):');
  let prev = '';
  for (const t of s.timeline) {
    if (t.category === prev) continue;
    prev = t.category;
    lines.push(`  ${t.fromMs.toFixed(0).padStart(6)} ms  ${t.category}`);
  }
  lines.push('', 'most self time:');
  for (const f of s.topSelf) lines.push(`  ${f.ms.toFixed(1).padStart(7)} ms  ${f.fn}  (${f.where})`);
  return lines.join('\n');
}

function main(argv: string[]): void {
  const file = argv.find((a) => !a.startsWith('--'));
  if (!file) throw new Error('usage: profile-summary.js FILE.cpuprofile [--slice-ms N] [--top N]');
  const opt = (name: string, d: number): number => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : d;
  };
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(renderSummary(summarize(p, opt('slice-ms', 100), opt('top', 30))) + '\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/.*\//, ''))) main(process.argv.slice(2));
