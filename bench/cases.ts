// The four cases, each side in fresh namespaces, the two sides alternating run by run (and which
// one goes first alternating too), so that the machine's drift over minutes hits both alike and the
// ratios compare runs made moments apart.

import type { BenchOptions } from './args.js';
import { runTimed, runWall, waitQuiet, type ProcessFigures } from './measure.js';
import { inNetns, withNetns } from './netns.js';
import { writeNftFiles, writeWireFile } from './nft-input.js';
import { medianFigures, medianPhase, type CaseResult, type RunRecord, type Side } from './results.js';
import { BIG_MAP, bigMapLoad, boundLike, bigMapUpdate, FAMILY, SHAPE_TITLES, serviceShape, sizeFor, TABLE, type ShapeId } from './shapes.js';
import { median, percentile } from './stats.js';
import { packagePath } from '../src/package-root.js';

// child.ts as one bundled file (scripts/bundle.mjs), as a program that embeds the library ships.
const CHILD = packagePath('dist-bench', 'bundle', 'load-child.js');

const log = (s: string): void => {
  process.stderr.write(`${s}\n`);
};

interface ChildRun {
  figures: ProcessFigures;
  phases: Record<string, unknown>;
  resourceUsage: { userS: number; sysS: number; maxRssMB: number };
}

/** One nftlink child process under GNU time; its last stdout line is its JSON report. */
async function nftlinkChild(args: string[]): Promise<ChildRun> {
  const r = await runTimed([process.execPath, CHILD, ...args]);
  const report = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Omit<ChildRun, 'figures'>;
  const { wall, user, sys, rssMB } = r;
  return { figures: { wall, user, sys, rssMB }, phases: report.phases, resourceUsage: report.resourceUsage };
}

/** Loads the big map into a namespace (not timed: cases c and d start from it). */
async function preloadBigMap(netns: string, elements: number): Promise<void> {
  await nftlinkChild(['load', netns, '--elements', String(elements)]);
  // A hash set resizes itself in a deferred work item after a large insert: let it finish, so the
  // timed part sees the table in its steady state.
  await waitQuiet();
}

const order = (run: number): Side[] => (run % 2 === 0 ? ['nftlink', 'nft'] : ['nft', 'nftlink']);

const fmt = (f: ProcessFigures): string => `wall ${f.wall.toFixed(3)} s, user ${f.user.toFixed(2)}, sys ${f.sys.toFixed(2)}, ${f.rssMB.toFixed(0)} MB`;

/** A further nftlink process timed in a load case's runs (a floor, a variant), beside the two sides. */
interface Companion {
  name: string;
  args: (ns: string) => string[];
}

/** The processes of one run, rotated run by run so that none always follows the same one. */
export function rotation<T>(items: readonly T[], run: number): T[] {
  const k = run % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * A load case: per run, each side (and each companion) loads into its own fresh namespace; the
 * namespace is deleted and the machine left to settle (the kernel tears it down in the background)
 * before the next process. All of a run's processes take turns in one loop, so that a ratio between
 * any two of them compares processes measured moments apart (the VM's speed drifts by minutes).
 */
async function loadCase(
  id: string,
  title: string,
  runs: number,
  nftlinkArgs: (ns: string) => string[],
  nftArgv: (ns: string) => string[],
  companions: readonly Companion[] = [],
): Promise<CaseResult> {
  const records: RunRecord[] = [];
  const extra = new Map<string, ProcessFigures[]>(companions.map((c) => [c.name, []]));
  type Turn = { side: Side } | { companion: Companion };
  for (let run = 0; run < runs; run++) {
    const turns: Turn[] = [...order(run).map((side) => ({ side })), ...companions.map((companion) => ({ companion }))];
    for (const turn of companions.length ? rotation(turns, run) : turns) {
      await waitQuiet();
      await withNetns(1, async (ns) => {
        if ('companion' in turn) {
          const c = await nftlinkChild(turn.companion.args(ns));
          extra.get(turn.companion.name)!.push(c.figures);
          log(`[${id}] run ${run + 1}/${runs} ${turn.companion.name}: ${fmt(c.figures)}`);
        } else if (turn.side === 'nftlink') {
          const c = await nftlinkChild(nftlinkArgs(ns));
          records.push({ side: 'nftlink', run, ...c.figures, phases: c.phases, resourceUsage: c.resourceUsage });
          log(`[${id}] run ${run + 1}/${runs} nftlink: ${fmt(c.figures)}`);
        } else {
          const r = await runTimed(nftArgv(ns));
          const { wall, user, sys, rssMB } = r;
          records.push({ side: 'nft', run, wall, user, sys, rssMB });
          log(`[${id}] run ${run + 1}/${runs} nft: ${fmt(r)}`);
        }
      });
    }
  }
  const result: CaseResult = { id, title, runs: records, median: {} };
  for (const side of ['nftlink', 'nft'] as const) {
    const m = medianFigures(records, side);
    if (m) result.median[side] = m;
  }
  result.extra = { nftlinkBuildMs: medianPhase(records, 'buildMs'), nftlinkCommitMs: medianPhase(records, 'commitMs') };
  if (companions.length) result.companions = Object.fromEntries(extra);
  return result;
}

/** The median of one figure of a companion's runs. */
function companionMedian(r: CaseResult, name: string, f: (p: ProcessFigures) => number): number {
  return median(r.companions![name]!.map(f));
}

/**
 * (a) table + map + N elements in one transaction, the elements streamed (a generator the
 * transaction encodes as it reads). Timed in the same runs: the same load with the elements built
 * as one array first (what a caller pays for holding 100k objects until the commit); a process that
 * only makes the same element objects, so that nftlink's own user and sys time (the difference) can
 * be told from node's and the caller's; the floor, a process that commits the same batch
 * encoded beforehand (node, the addon and the kernel: what no library could take away); and the
 * load and its floor again with the map declared with a size (sizeFor), which spares the kernel
 * growing its hash table from 4 buckets: shown, not judged (the case's map is declared as
 * kube-proxy declares its maps, without a size). And the load in an unbound transaction, whose
 * whole request the addon converts at commit instead of part by part while it is encoded.
 */
export async function caseA(o: BenchOptions): Promise<CaseResult> {
  const [file] = writeNftFiles('a', [bigMapLoad(o.elements)]);
  // The floors commit the very batches the bound loads send.
  const wire = writeWireFile('a', bigMapLoad(o.elements, 'stream', undefined, boundLike()));
  const size = sizeFor(o.elements);
  const sizedWire = writeWireFile('a-sized', bigMapLoad(o.elements, 'stream', size, boundLike()));
  const elements = String(o.elements);
  const result = await loadCase(
    'a',
    `${o.elements.toLocaleString('en')} elements into one concatenated map, one transaction`,
    o.runs,
    (ns) => ['load', ns, '--elements', elements],
    (ns) => [...inNetns(ns), 'nft', '-f', file!],
    [
      { name: 'floor', args: (ns) => ['load-floor', ns, '--wire', wire] },
      { name: 'as an array', args: (ns) => ['load', ns, '--elements', elements, '--array'] },
      { name: 'input only', args: (ns) => ['input', ns, '--elements', elements] },
      { name: 'sized', args: (ns) => ['load', ns, '--elements', elements, '--size', String(size)] },
      { name: 'sized floor', args: (ns) => ['load-floor', ns, '--wire', sizedWire] },
      { name: 'unbound', args: (ns) => ['load', ns, '--elements', elements, '--unbound'] },
    ],
  );
  const med = (name: string, f: (p: ProcessFigures) => number): number => companionMedian(result, name, f);
  result.extra = {
    ...result.extra,
    inputOnlyUserMs: med('input only', (f) => f.user) * 1000,
    inputOnlySysMs: med('input only', (f) => f.sys) * 1000,
    floorWallS: med('floor', (f) => f.wall),
    floorUserS: med('floor', (f) => f.user),
    floorSysS: med('floor', (f) => f.sys),
    arrayWallS: med('as an array', (f) => f.wall),
    arrayUserS: med('as an array', (f) => f.user),
    arraySysS: med('as an array', (f) => f.sys),
    arrayRssMB: med('as an array', (f) => f.rssMB),
    sizedMapSize: size,
    sizedWallS: med('sized', (f) => f.wall),
    sizedUserS: med('sized', (f) => f.user),
    sizedSysS: med('sized', (f) => f.sys),
    sizedFloorWallS: med('sized floor', (f) => f.wall),
    sizedFloorSysS: med('sized floor', (f) => f.sys),
    unboundWallS: med('unbound', (f) => f.wall),
    unboundUserS: med('unbound', (f) => f.user),
    unboundSysS: med('unbound', (f) => f.sys),
  };
  return result;
}

/** (b) one service shape of docs/architecture.md's table. */
export async function caseB(o: BenchOptions, shape: ShapeId): Promise<CaseResult> {
  const files = writeNftFiles(`b${shape}`, serviceShape(shape, { services: o.services, endpoints: o.endpoints }), o.endpoints);
  // Several transactions are several `nft -f` processes, one after the other (their rusage summed).
  const nftArgv = (ns: string): string[] =>
    files.length === 1 ? [...inNetns(ns), 'nft', '-f', files[0]!] : [...inNetns(ns), 'sh', '-c', 'for f; do nft -f "$f" || exit 1; done', 'sh', ...files];
  // Timed beside the two sides: a process that starts node and loads the modules and does nothing
  // else, so that nftlink's own user and sys time (the difference) can be told from node's start-up.
  const result = await loadCase(
    `b${shape}`,
    `${o.services.toLocaleString('en')} services x ${o.endpoints}: ${SHAPE_TITLES[shape]}`,
    o.runs,
    (ns) => ['shape', ns, '--shape', String(shape), '--services', String(o.services), '--endpoints', String(o.endpoints)],
    nftArgv,
    [{ name: 'start-up only', args: (ns) => ['input', ns, '--elements', '0'] }],
  );
  result.extra = {
    ...result.extra,
    startupOnlyUserMs: companionMedian(result, 'start-up only', (f) => f.user) * 1000,
    startupOnlySysMs: companionMedian(result, 'start-up only', (f) => f.sys) * 1000,
  };
  return result;
}

/** (c) one element delete+add into the big map: many in one nftlink process; one `nft -f` process each. */
export async function caseC(o: BenchOptions): Promise<CaseResult> {
  // Keys of the nft side's updates: spread over the map, all distinct (fresh namespace per run).
  const files = writeNftFiles(
    'c',
    Array.from({ length: o.nftUpdates }, (_, k) => bigMapUpdate((k * 7919 + 13) % o.elements, k + 1)),
  );
  const records: RunRecord[] = [];
  const perUpdate: number[] = [];
  const nftPerUpdate: number[] = [];
  for (let run = 0; run < o.runs; run++) {
    for (const side of order(run)) {
      await waitQuiet();
      await withNetns(1, async (ns) => {
        await preloadBigMap(ns, o.elements);
        if (side === 'nftlink') {
          const c = await nftlinkChild(['update', ns, '--elements', String(o.elements), '--updates', String(o.updates)]);
          const ms = c.phases.perUpdateMs as number[];
          perUpdate.push(...ms);
          records.push({ side, run, ...c.figures, phases: c.phases, resourceUsage: c.resourceUsage });
          log(`[c] run ${run + 1}/${o.runs} nftlink: ${o.updates} updates, median ${median(ms).toFixed(3)} ms, p99 ${percentile(ms, 99).toFixed(3)} ms`);
        } else {
          const walls: number[] = [];
          for (const f of files) walls.push(await runWall([...inNetns(ns), 'nft', '-f', f]));
          nftPerUpdate.push(...walls.map((s) => s * 1000));
          records.push({ side, run, wall: walls.reduce((a, b) => a + b, 0), user: NaN, sys: NaN, rssMB: NaN, phases: { perUpdateMs: walls.map((s) => s * 1000) } });
          log(`[c] run ${run + 1}/${o.runs} nft:     ${files.length} processes, median ${(median(walls) * 1000).toFixed(1)} ms`);
        }
      });
    }
  }
  return {
    id: 'c',
    title: `one element delete+add into the ${o.elements.toLocaleString('en')}-element map`,
    runs: records,
    median: {},
    extra: {
      nftlinkUpdates: perUpdate.length,
      nftlinkMedianMs: median(perUpdate),
      nftlinkP99Ms: percentile(perUpdate, 99),
      nftlinkMaxMs: Math.max(...perUpdate),
      nftUpdates: nftPerUpdate.length,
      nftMedianMs: median(nftPerUpdate),
      nftP99Ms: percentile(nftPerUpdate, 99),
    },
  };
}

/**
 * (d) dumping the big map: nftlink decodes it to objects; `nft list map` prints it (to /dev/null).
 * Also timed: the floor, a process that makes the same dump and decodes nothing (node, the addon
 * and the kernel's part), since the kernel's share decides how close (d) can get.
 */
export async function caseD(o: BenchOptions): Promise<CaseResult> {
  const records: RunRecord[] = [];
  const floor: ProcessFigures[] = [];
  for (let run = 0; run < o.runs; run++) {
    // One namespace per run, shared by both sides: a dump does not change what it reads.
    await waitQuiet();
    await withNetns(1, async (ns) => {
      await preloadBigMap(ns, o.elements);
      // The floor takes its turn with the two sides (rotated run by run), so its ratio compares
      // dumps made moments apart.
      for (const turn of rotation([...order(run), 'floor'] as const, run)) {
        await waitQuiet();
        if (turn === 'floor') {
          const f = await nftlinkChild(['floor', ns, '--elements', String(o.elements)]);
          floor.push(f.figures);
          log(`[d] run ${run + 1}/${o.runs} floor: ${fmt(f.figures)}`);
        } else if (turn === 'nftlink') {
          const c = await nftlinkChild(['dump', ns, '--elements', String(o.elements)]);
          records.push({ side: turn, run, ...c.figures, phases: c.phases, resourceUsage: c.resourceUsage });
          log(`[d] run ${run + 1}/${o.runs} nftlink: ${fmt(c.figures)}`);
        } else {
          // `list map`: nft 1.0.6's `list set` answers ENOENT for a map.
          const r = await runTimed([...inNetns(ns), 'nft', 'list', 'map', FAMILY, TABLE, BIG_MAP], { discardStdout: true });
          const { wall, user, sys, rssMB } = r;
          records.push({ side: turn, run, wall, user, sys, rssMB });
          log(`[d] run ${run + 1}/${o.runs} nft: ${fmt(r)}`);
        }
      }
    });
  }
  const result: CaseResult = { id: 'd', title: `dumping the ${o.elements.toLocaleString('en')}-element map`, runs: records, median: {}, companions: { floor } };
  for (const side of ['nftlink', 'nft'] as const) {
    const m = medianFigures(records, side);
    if (m) result.median[side] = m;
  }
  result.extra = {
    nftlinkDumpMs: medianPhase(records, 'dumpMs'),
    floorWallS: median(floor.map((f) => f.wall)),
    floorUserS: median(floor.map((f) => f.user)),
    floorSysS: median(floor.map((f) => f.sys)),
  };
  return result;
}
