// The manifest fuzzer at scale (issue 31): generated manifest files (test/fixtures/manifest-fuzz.ts:
// good Services and EndpointSlices, and mutated copies with one field of any type or removed),
// written in rounds into one directory that two long-running readers watch:
//   - an in-process ManifestSource feeding a ChangeTracker: after each round, every good object
//     of every file is delivered and programmed in the model, every bad one refused by name;
//   - the real `nftlink proxy --manifests DIR` process, programming a network namespace of its own:
//     after each round every good service port is in its ruleset, and it never exits.
// Each round replaces the previous round's files (their objects are deleted, the new ones added:
// the later re-reads of a long-running proxy), and a stable file written before the first round
// must never lose an object; one file in ten is first written half. Unhandled rejections and exceptions in this process are counted; the
// proxy's stderr is searched for JavaScript errors.

import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Netns } from '../../src/netns/netns.js';
import { ProxyProcess } from '../../src/netns/proxy-process.js';
import { ChangeTracker } from '../../src/proxy/model/tracker.js';
import { ManifestSource } from '../../src/proxy/source/manifests.js';
import type { SourceHandler, SourceProblem } from '../../src/proxy/source/source.js';
import { checkFuzzFile, fuzzFile, fuzzFileName, fuzzFileText, goodKeys, type FuzzFile, type Json } from '../../test/fixtures/manifest-fuzz.js';

export interface FuzzOptions {
  files: number;
  /** The index of the first file (to repeat one round of a long run; default 0). */
  first?: number;
  perRound: number;
  seed: number;
  /** Run the real proxy in a namespace too (needs root). */
  kernel: boolean;
  /** Per round: how long the readers may take to show every good object. */
  roundTimeoutMs: number;
}

export interface FuzzResult {
  files: number;
  rounds: number;
  objects: number;
  goodObjects: number;
  badObjects: number;
  /** Bad objects refused with a problem naming them (the others were valid after all, and delivered). */
  refused: number;
  /** Problems that named no object: files that did not parse as a whole (the half-written ones, before they were complete). */
  fileProblems: number;
  /** What was wrong in the in-process reader's model (each a line), over every round. */
  modelFailures: string[];
  /** Good service ports missing from the proxy's ruleset after a round's timeout. */
  kernelFailures: string[];
  /** Deletions of the stable file's objects (a read that lost state). */
  stableLosses: number;
  unhandled: string[];
  /** The proxy process ended before it was stopped (its code or signal), or -; null without --kernel. */
  proxyExit: string | null;
  /** JavaScript errors in the proxy's stderr (TypeError, RangeError, "sync failed", ...). */
  proxyErrors: string[];
  seconds: number;
}

const NODE_IP = '198.19.255.1';
const STABLE_FILE = 'stable.yaml';
/** A mistake to stop at: a JavaScript error thrown where an object should have been refused. */
const PROXY_ERROR = /TypeError|RangeError|ReferenceError|SyntaxError|Maximum call stack|unhandled|"msg":"sync failed"/;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The `index`th file of the run (the same for a seed on every run). */
function generate(index: number, seed: number): FuzzFile {
  return fc.sample(fuzzFile(index), { seed: seed + index, numRuns: 1 })[0]!;
}

/** A Service the rounds never touch: it must stay delivered through every re-read. */
function stableText(): string {
  const svc = (i: number): Json => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `stable-${i}`, namespace: 'stable' },
    spec: { clusterIP: `198.19.254.${i}`, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  });
  return [1, 2, 3].map((i) => JSON.stringify(svc(i))).join('\n---\n');
}

/** "Kind namespace/name" of what a SourceHandler event carries. */
const keyOf = (kind: string, meta: { name?: string; namespace?: string } | undefined): string => `${kind} ${meta?.namespace}/${meta?.name}`;

export async function runManifestFuzz(opts: FuzzOptions, progress: (line: string) => void = () => {}): Promise<FuzzResult> {
  const started = performance.now();
  const result: FuzzResult = {
    files: 0,
    rounds: 0,
    objects: 0,
    goodObjects: 0,
    badObjects: 0,
    refused: 0,
    fileProblems: 0,
    modelFailures: [],
    kernelFailures: [],
    stableLosses: 0,
    unhandled: [],
    proxyExit: opts.kernel ? '-' : null,
    proxyErrors: [],
    seconds: 0,
  };
  const onUnhandled = (err: unknown): void => {
    result.unhandled.push(String((err as Error)?.stack ?? err));
  };
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);

  const dir = await mkdtemp(join(tmpdir(), 'nftlink-fuzz-manifests-'));
  await writeFile(join(dir, STABLE_FILE), stableText());
  const tracker = new ChangeTracker({ nodeName: 'fuzz-node' });
  const delivered = new Set<string>();
  let problems: SourceProblem[] = [];
  const record = (kind: string, type: string, meta: { name?: string; namespace?: string } | undefined): void => {
    const key = keyOf(kind, meta);
    if (type !== 'delete') delivered.add(key);
    else {
      delivered.delete(key);
      if (meta?.namespace === 'stable') result.stableLosses++;
    }
  };
  const handler: SourceHandler = {
    service: (t, s) => {
      record('Service', t, s.metadata);
      tracker.service(t, s);
    },
    endpointSlice: (t, s) => {
      record('EndpointSlice', t, s.metadata);
      tracker.endpointSlice(t, s);
    },
    synced: () => {},
    problem: (p) => problems.push(p),
  };
  const source = new ManifestSource(dir, { debounceMs: 20 });
  let ns: Netns | undefined;
  let proxy: ProxyProcess | undefined;
  try {
    await source.start(handler);
    if (opts.kernel) {
      ns = Netns.create('nftlink-fuzz');
      // Interrupted (the namespace's own SIGINT/SIGTERM handler exits), the proxy must not outlive us.
      process.once('exit', () => proxy?.child.kill('SIGKILL'));
      proxy = ProxyProcess.startHere(['--manifests', dir, '--netns', ns.name, '--node-ip', NODE_IP, '--healthz-bind-address', '', '--metrics-bind-address', '', '--min-sync-period', '0s']);
    }
    let previous: FuzzFile[] = [];
    const start = opts.first ?? 0;
    for (let first = start; first < start + opts.files; first += opts.perRound) {
      const round = Array.from({ length: Math.min(opts.perRound, start + opts.files - first) }, (_, i) => generate(first + i, opts.seed));
      problems = [];
      // The previous round's files go (their objects are deleted), this round's come.
      await Promise.all(previous.map((f) => unlink(join(dir, fuzzFileName(f)))));
      // One file in ten is caught half-written first (a non-atomic writer): it must cost nothing, and apply once complete.
      const halfWritten = round.filter((f) => f.index % 10 === 3);
      await Promise.all(round.map((f) => writeFile(join(dir, fuzzFileName(f)), halfWritten.includes(f) ? fuzzFileText(f).slice(0, 200) : fuzzFileText(f))));
      // Until the reader has seen them so (a truncated YAML may parse: then it is refused or delivered in part).
      const seenHalf = (): boolean => halfWritten.every((f) => f.yaml || problems.some((p) => p.origin === join(dir, fuzzFileName(f))));
      for (const until = Date.now() + 2000; !seenHalf() && Date.now() < until; ) await sleep(20);
      await sleep(100);
      await Promise.all(halfWritten.map((f) => writeFile(join(dir, fuzzFileName(f)), fuzzFileText(f))));
      const wanted = round.flatMap(goodKeys);
      const gone = previous.flatMap(goodKeys);
      const deadline = Date.now() + opts.roundTimeoutMs;
      while (Date.now() < deadline && !(wanted.every((k) => delivered.has(k)) && !gone.some((k) => delivered.has(k)))) await sleep(20);
      await sleep(100); // the refusals of the last files read
      const state = tracker.snapshot().states.ipv4;
      for (const f of round) result.modelFailures.push(...checkFuzzFile(f, join(dir, fuzzFileName(f)), { delivered, problems }, state, { halfWritten: halfWritten.includes(f) }));
      for (const stable of [1, 2, 3]) if (!delivered.has(`Service stable/stable-${stable}`)) result.modelFailures.push(`round ${result.rounds}: stable-${stable} not delivered`);
      if (ns && proxy) result.kernelFailures.push(...(await waitForRuleset(ns, proxy, round, opts.roundTimeoutMs)));
      result.rounds++;
      result.files += round.length;
      for (const f of round) {
        result.goodObjects += f.pairs.length * 2;
        result.badObjects += f.bad.length;
      }
      result.refused += problems.filter((p) => p.object || / items\[\d+\]$/.test(p.origin)).length;
      result.fileProblems += problems.filter((p) => !p.object && !/ items\[\d+\]$/.test(p.origin)).length;
      previous = round;
      progress(`round ${result.rounds}: ${result.files} files, ${result.modelFailures.length} model failures, ${result.kernelFailures.length} kernel failures, ${result.unhandled.length} unhandled`);
      if (proxy && (proxy.child.exitCode !== null || proxy.child.signalCode !== null)) break;
    }
  } finally {
    await source.stop();
    if (proxy) {
      const code = proxy.child.exitCode;
      const signal = proxy.child.signalCode;
      if (code !== null || signal !== null) result.proxyExit = String(code ?? signal);
      await proxy.stop();
      result.proxyErrors = proxy.raw.split('\n').filter((l) => PROXY_ERROR.test(l));
    }
    ns?.remove();
    await rm(dir, { recursive: true, force: true });
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  }
  result.objects = result.goodObjects + result.badObjects;
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/** Waits until every good service port of the round is in the proxy's ruleset; what is still missing at the timeout. */
async function waitForRuleset(ns: Netns, proxy: ProxyProcess, round: readonly FuzzFile[], timeoutMs: number): Promise<string[]> {
  const wanted: string[] = [];
  for (const f of round) {
    for (const [svc] of f.pairs) {
      const s = svc as { metadata: { name: string }; spec: { clusterIP: string; ports: { port: number; protocol: string }[] } };
      for (const p of s.spec.ports) wanted.push(`${s.spec.clusterIP} . ${p.protocol.toLowerCase()} . ${p.port}`);
    }
  }
  const deadline = Date.now() + timeoutMs;
  let missing = wanted;
  for (;;) {
    const ruleset = ns.exec('nft', ['list', 'ruleset']);
    missing = wanted.filter((w) => !ruleset.includes(w));
    if (missing.length === 0 || Date.now() > deadline || proxy.child.exitCode !== null) break;
    await sleep(200);
  }
  return missing.map((m) => `not in the ruleset: ${m}`);
}

/** The report: a table of the figures, then the first failures of each kind. */
export function fuzzReport(r: FuzzResult): string {
  const rows: [string, string | number][] = [
    ['files generated', r.files],
    ['rounds (re-reads of one long-running directory)', r.rounds],
    ['objects', r.objects],
    ['  good', r.goodObjects],
    ['  mutated', r.badObjects],
    ['  refused by name', r.refused],
    ['files refused as a whole', r.fileProblems],
    ['model failures (good object not programmed, bad one unnamed)', r.modelFailures.length],
    ['stable objects lost', r.stableLosses],
    ['unhandled errors (this process)', r.unhandled.length],
    ['proxy: good ports missing from the ruleset', r.proxyExit === null ? 'not run' : r.kernelFailures.length],
    ['proxy: exits', r.proxyExit === null ? 'not run' : r.proxyExit === '-' ? 0 : `1 (${r.proxyExit})`],
    ['proxy: JavaScript errors in its log', r.proxyExit === null ? 'not run' : r.proxyErrors.length],
    ['seconds', r.seconds.toFixed(1)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  for (const [what, list] of [
    ['model failures', r.modelFailures],
    ['kernel failures', r.kernelFailures],
    ['unhandled', r.unhandled],
    ['proxy errors', r.proxyErrors],
  ] as const) {
    if (list.length) lines.push(`first ${what}:`, ...list.slice(0, 5).map((l) => `  ${l.slice(0, 300)}`));
  }
  return lines.join('\n');
}

/** Whether the run met every goal. */
export function fuzzPassed(r: FuzzResult): boolean {
  return r.modelFailures.length === 0 && r.kernelFailures.length === 0 && r.stableLosses === 0 && r.unhandled.length === 0 && (r.proxyExit === null || r.proxyExit === '-') && r.proxyErrors.length === 0;
}
