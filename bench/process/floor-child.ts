// The floor under the measured process: what the kernel itself takes to commit the very ruleset
// `nftlink proxy --once` writes, as one batch per family, encoded before the clock starts (so only
// the addon's send and the kernel's commit are timed, as in `npm run bench:load`'s load floor).
// Added to a bare `node -e ''` start it is what no proxy written in Node could go below.
//
//   node dist-bench/bundle/process-floor.js <netns> <the proxy's flags: --manifests DIR ...>
//
// It builds the transactions as `nftlink render` does (src/cli/proxy.ts, previewProxy): the same
// settings from the same flags, the same model, the Proxier in preview mode.
// Prints one JSON line: commitMs (the batches' commits, summed), bytes, operations.

import { previewProxy } from '../../src/cli/proxy.js';
import { loadNative } from '../../src/native/binding.js';

/** What `nftlink render` would print, as transactions: one batch per family. */
async function batches(argv: string[]): Promise<{ buf: Uint8Array; operations: number }[]> {
  return (await previewProxy(argv)).map(({ transaction: tx }) => ({ buf: tx.encode().buffer, operations: tx.size }));
}

async function main(): Promise<Record<string, number>> {
  const [netns, ...argv] = process.argv.slice(2);
  if (!netns) throw new Error('usage: process-floor.js <netns> --manifests DIR [proxy flags]');
  const txs = await batches(argv);
  const native = loadNative();
  const h = native.open(netns);
  try {
    let commitMs = 0;
    for (const { buf } of txs) {
      const t0 = performance.now();
      const { errors } = await native.commit(h, buf);
      commitMs += performance.now() - t0;
      if (errors.length > 0) throw new Error(`process-floor: the batch was refused: errno ${errors[0]!.errno} ${errors[0]!.message}`);
    }
    return { commitMs, bytes: txs.reduce((s, t) => s + t.buf.byteLength, 0), operations: txs.reduce((s, t) => s + t.operations, 0) };
  } finally {
    native.close(h);
  }
}

main().then(
  (out) => {
    process.stdout.write(JSON.stringify(out) + '\n');
    // Exit at once: tearing down the model's heap is not the kernel's time (nor measured here).
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
