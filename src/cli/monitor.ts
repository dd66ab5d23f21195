// `nftlink monitor`: the namespace's ruleset changes as `nft monitor` prints them, one line per
// change and `# new generation N by process PID (NAME)` after each transaction, until interrupted
// (SIGINT, SIGTERM) or its output is closed.

import { Nftables, monitorLines, type Family, type NftSet } from '../nft/index.js';

export interface MonitorCommandOptions {
  netns?: string;
  table?: { family: Family; name: string };
  /** Where the lines go (default stdout); the "watching" notice goes to stderr. */
  out?: NodeJS.WritableStream;
  /** Ends the command (as SIGINT does). */
  signal?: AbortSignal;
}

export async function monitorCommand(opts: MonitorCommandOptions): Promise<void> {
  const out = opts.out ?? process.stdout;
  const scope = opts.table ? { family: opts.table.family, table: opts.table.name } : {};
  const nft = Nftables.open(opts.netns !== undefined ? { netns: opts.netns } : {});
  const mon = nft.monitor(scope);
  const stop = (): void => mon.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  opts.signal?.addEventListener('abort', stop);
  out.on('error', stop); // EPIPE: whoever read the output is gone
  try {
    // The named sets that exist, for rules that look them up (nft's cache); kept by the events.
    let sets: NftSet[] = (await nft.dump({ ...scope, elements: false })).sets;
    await mon.started();
    process.stderr.write(`nftlink monitor: watching ${opts.netns !== undefined ? `network namespace ${opts.netns}` : 'this network namespace'}\n`);
    for await (const ev of mon) {
      if (ev.type === 'transaction') {
        for (const c of ev.changes) {
          if (c.kind !== 'set') continue;
          sets = sets.filter((s) => s.family !== c.set.family || s.table !== c.set.table || s.name !== c.set.name);
          if (c.verb === 'add') sets.push(c.set);
        }
      }
      out.write(monitorLines(ev, sets).join('\n') + '\n');
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    opts.signal?.removeEventListener('abort', stop);
    mon.close();
    nft.close();
  }
}
