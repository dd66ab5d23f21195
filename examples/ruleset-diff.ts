// Read back and compare: what the kernel holds against a desired state, and the difference as the
// nft commands that would turn one into the other.
//
//   node examples/ruleset-diff.ts show                     the namespace's whole ruleset, as nft -f text
//   node examples/ruleset-diff.ts diff examples/desired-web.ts    the difference; exit 1 if there is one
//   node examples/ruleset-diff.ts apply examples/desired-web.ts   commit the difference (one transaction)
//
// The desired state is a module whose default export is a DesiredState: tables, chains, sets with
// their elements, and rules (see examples/desired-web.ts). Only its tables are compared: the rest of
// the ruleset is left alone. Elements are compared one by one and chains rule by rule, so the
// difference of a large set is the elements that differ, and a chain is rewritten only if a rule
// differs. It works on the network namespace it runs in (`ip netns exec NAME node ...`).

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Nftables, Reconciler, renderRuleset, type DesiredState } from 'nftlink';

async function loadDesired(file: string | undefined): Promise<DesiredState> {
  if (!file) throw new Error('which desired state? a module path, e.g. examples/desired-web.ts');
  const mod = (await import(pathToFileURL(resolve(file)).href)) as { default?: DesiredState };
  if (!mod.default?.tables) throw new Error(`${file} has no default export of a DesiredState`);
  return mod.default;
}

async function main([command, file]: string[]): Promise<number> {
  const nft = Nftables.open();
  try {
    if (command === 'show') {
      process.stdout.write(renderRuleset(await nft.dump()));
      return 0;
    }
    if (command !== 'diff' && command !== 'apply') throw new Error('usage: ruleset-diff.ts show | diff DESIRED | apply DESIRED');
    const desired = await loadDesired(file);
    // One dump (one generation of the whole ruleset); the reconciler keeps what is in the desired
    // tables. A table the kernel does not hold yet is added by the plan.
    const reconciler = new Reconciler();
    reconciler.resync(await nft.dump(), desired.tables);
    const { tx, stats } = reconciler.plan(desired);
    if (tx.size === 0) {
      console.log('no difference');
      return 0;
    }
    process.stdout.write(tx.render());
    console.log(`# ${stats.chainsWritten} chain(s) written, ${stats.chainsDeleted} deleted, ${stats.setsCreated} set(s) created, ${stats.setsDeleted} deleted, ${stats.elementsChanged} element(s) changed`);
    if (command === 'diff') return 1;
    await nft.commit(tx);
    reconciler.committed();
    console.log('# applied');
    return 0;
  } finally {
    nft.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 2;
  },
);
