// The nftlink side of one run, as its own process, so that its wall, user, sys and peak RSS are the
// process's own (node start-up and module loading included, as `nft`'s start-up is on the other side),
// measured from outside exactly as `nft` is.
//
//   node dist/bundle/load-child.js load   <netns> --elements N [--array] [--size S] [--unbound]
//                                              (elements streamed, or built as one array first; the map declared with
//                                               size S; the transaction bound to the connection unless --unbound)
//   node dist/bundle/load-child.js loads  <netns> --elements N --rounds R   (load, bound and unbound by turns, R times each
//                                                                          in one warm process; the table dropped after each)
//   node dist/bundle/load-child.js input  <netns> --elements N [--array]     (only makes load's elements)
//   node dist/bundle/load-child.js shape  <netns> --shape 1..6 --services N --endpoints E
//   node dist/bundle/load-child.js update <netns> --elements N --updates K   (the big map must be loaded)
//   node dist/bundle/load-child.js dump   <netns> --elements N               (the big map must be loaded)
//   node dist/bundle/load-child.js floor  <netns> --elements N               (dump's floor: the same dump, nothing decoded)
//   node dist/bundle/load-child.js load-floor <netns> --wire FILE              (load's floor: a batch encoded beforehand)
//
// Prints one JSON line: in-process phase times (ms) and process.resourceUsage() as a cross-check.

import { readFileSync } from 'node:fs';
import { Nftables, Transaction } from '../src/nft/index.js';
import { NFPROTO } from '../src/nft/netlink/constants.js';
import { loadNative } from '../src/native/binding.js';
import { waitQuiet } from './measure.js';
import { bigMap, bigMapElements, bigMapElementStream, bigMapLoad, bigMapUpdate, FAMILY, serviceShape, TABLE, type ShapeId } from './shapes.js';

const now = (): number => Number(process.hrtime.bigint()) / 1e6;

function option(args: string[], name: string): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : NaN;
  if (!Number.isInteger(v) || v < 0) throw new Error(`child: --${name} needs a non-negative integer`);
  return v;
}

/**
 * What `dump` costs before any decoding: node, the addon, and the kernel producing the map's dump,
 * received part by part into buffers that are only counted. The floor under case (d).
 */
async function dumpFloor(netns: string, expectedElements: number): Promise<Record<string, unknown>> {
  const native = loadNative();
  const h = native.open(netns);
  try {
    const map = bigMap();
    let bytes = 0;
    let parts = 0;
    const t0 = now();
    await native.dumpSetElementsStream(h, NFPROTO[map.family], map.table, map.name, (part) => {
      bytes += part.byteLength;
      parts++;
    });
    // An element of this map is 36 bytes on the wire (its key and data nests): a short answer is refused.
    if (bytes < expectedElements * 30) throw new Error(`child: the floor dump read ${bytes} bytes, too few for ${expectedElements} elements`);
    return { dumpMs: now() - t0, bytes, parts };
  } finally {
    native.close(h);
  }
}

/**
 * What `load` costs when nothing is built: node, the addon (libnftnl's messages) and the kernel
 * committing the very batch `load` sends, read from a file that (a)'s set-up encoded. The floor
 * under case (a).
 */
async function loadFloor(netns: string, wireFile: string): Promise<Record<string, unknown>> {
  const native = loadNative();
  const h = native.open(netns);
  try {
    const buf = readFileSync(wireFile);
    const t0 = now();
    const { errors } = await native.commit(h, buf);
    if (errors.length > 0) throw new Error(`child: the floor's batch was refused: errno ${errors[0]!.errno} ${errors[0]!.message}`);
    return { commitMs: now() - t0, bytes: buf.byteLength };
  } finally {
    native.close(h);
  }
}

async function main(): Promise<Record<string, unknown>> {
  const [what, netns, ...args] = process.argv.slice(2);
  if (!what || !netns) throw new Error('usage: child.js load|loads|input|shape|update|dump|floor|load-floor <netns> [options]');
  if (what === 'floor') return dumpFloor(netns, option(args, 'elements'));
  if (what === 'load-floor') {
    const i = args.indexOf('--wire');
    if (i < 0 || !args[i + 1]) throw new Error('child: load-floor needs --wire FILE');
    return loadFloor(netns, args[i + 1]!);
  }
  const nft = Nftables.open({ netns });
  try {
    switch (what) {
      case 'load': {
        const t0 = now();
        const size = args.includes('--size') ? option(args, 'size') : undefined;
        // Bound to the connection (the addon converts parts while the rest is encoded), unless --unbound.
        const tx = bigMapLoad(option(args, 'elements'), args.includes('--array') ? 'array' : 'stream', size, args.includes('--unbound') ? undefined : nft.transaction());
        const t1 = now();
        await nft.commit(tx);
        const t2 = now();
        return { buildMs: t1 - t0, commitMs: t2 - t1, encodedBytes: tx.encodedSize };
      }
      case 'loads': {
        // A process that loads again and again (an embedder's daemon): by then V8 has compiled
        // the encoder, so a core is free while JavaScript encodes, for the addon to convert.
        const count = option(args, 'elements');
        const phases: Record<'bound' | 'unbound', { buildMs: number; commitMs: number }[]> = { bound: [], unbound: [] };
        for (let r = 0; r < option(args, 'rounds'); r++) {
          for (const side of r % 2 ? (['bound', 'unbound'] as const) : (['unbound', 'bound'] as const)) {
            const t0 = now();
            const tx = bigMapLoad(count, 'stream', undefined, side === 'bound' ? nft.transaction() : undefined);
            const t1 = now();
            await nft.commit(tx);
            phases[side].push({ buildMs: t1 - t0, commitMs: now() - t1 });
            await nft.commit(new Transaction().delete({ table: { family: FAMILY, name: TABLE } }));
            // The kernel frees the table's 100k elements after an RCU grace period: let it.
            await waitQuiet();
          }
        }
        return phases;
      }
      case 'input': {
        // What `load` costs before nftlink does anything: node, the modules, and the caller's
        // 100,000 element objects, made as load makes them (the figures of (a) minus these are
        // nftlink's own). Streamed, they are made and dropped one by one; --array keeps them all.
        const t0 = now();
        const count = option(args, 'elements');
        let made = 0;
        if (args.includes('--array')) made = bigMapElements(count).length;
        else for (const e of bigMapElementStream(count)) made += e.key.length > 0 ? 1 : 0;
        return { buildMs: now() - t0, elements: made };
      }
      case 'shape': {
        const shape = option(args, 'shape') as ShapeId;
        const t0 = now();
        const txs = serviceShape(shape, { services: option(args, 'services'), endpoints: option(args, 'endpoints') });
        const t1 = now();
        // Shape 2 commits its transactions one after the other, as 20 `nft -f` runs do.
        for (const tx of txs) await nft.commit(tx);
        const t2 = now();
        return { buildMs: t1 - t0, commitMs: t2 - t1, transactions: txs.length, encodedBytes: txs.reduce((s, t) => s + t.encodedSize, 0) };
      }
      case 'update': {
        const elements = option(args, 'elements');
        const updates = option(args, 'updates');
        const perUpdateMs: number[] = [];
        const commitMs: number[] = [];
        for (let u = 0; u < updates; u++) {
          // A spread of keys (7919 is prime, so no key repeats within `elements` updates).
          const i = (u * 7919) % elements;
          const t0 = now();
          const tx = bigMapUpdate(i, u + 1);
          const t1 = now();
          await nft.commit(tx);
          const t2 = now();
          perUpdateMs.push(t2 - t0);
          commitMs.push(t2 - t1);
        }
        return { perUpdateMs, commitMs };
      }
      case 'dump': {
        const expected = option(args, 'elements');
        const t0 = now();
        const { elements } = await nft.dumpSetElements(bigMap());
        const t1 = now();
        // A dump that lost elements would be a fast wrong answer: refuse it.
        if (elements.length !== expected) throw new Error(`child: dump returned ${elements.length} elements, expected ${expected}`);
        return { dumpMs: t1 - t0, elements: elements.length };
      }
      default:
        throw new Error(`child: unknown case ${what}`);
    }
  } finally {
    nft.close();
  }
}

main().then(
  (phases) => {
    const ru = process.resourceUsage();
    process.stdout.write(JSON.stringify({ phases, resourceUsage: { userS: ru.userCPUTime / 1e6, sysS: ru.systemCPUTime / 1e6, maxRssMB: ru.maxRSS / 1024 } }) + '\n');
    // Done: exit at once, as nft does, instead of tearing down a heap of 100k elements (15-20 ms of
    // the measured wall). The write above is synchronous (stdout is a pipe or a file, on Linux).
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    // A kernel refusal: name every failing operation (the operation objects themselves can hold 100k elements).
    const refusals = (err as { refusals?: { errno: number; kernelMessage: string; operationIndex: number; command?: string }[] }).refusals;
    for (const r of refusals?.slice(0, 10) ?? []) {
      process.stderr.write(`  op ${r.operationIndex}: errno ${r.errno} ${r.kernelMessage} ${(r.command ?? '').slice(0, 300)}\n`);
    }
    process.exitCode = 1;
  },
);
