// `npm run bench:commit-walk`: what the kernel charges every commit for the chains the namespace holds.
//
// nf_tables_commit makes each chain's new rules visible to the packet path by walking every chain
// of every table in the namespace, whether the transaction touched it or not (step 2 of the commit,
// nf_tables_commit_chain per chain, Linux 6.18). Each chain is one list hop and one load of its own
// structure: nothing when the structures are in the CPU's caches, a trip to memory each when they
// are not, as after a proxy sat idle between syncs while other processes ran. That walk is a floor
// under the smallest sync of a table of service chains (one endpoint replaced: four element
// operations), which is why it is measured here with nothing else in the commit.
//
// In one process, one fresh namespace per chain count: a table of C chains with one rule each (as
// the slots layout's service chains), and beside it a table with one set. Each timed commit adds
// or deletes one element of that set, in turn. "warm": the commits back to back; "cold": before
// each, this thread writes a buffer larger than the last-level cache, which evicts the chains'
// structures. Prints medians and the walk's cost per chain, against the table without chains.

import { parseArgs } from 'node:util';
import { meta, Nftables, rule, Transaction, types, type NftSet } from '../src/nft/index.js';
import { intList } from './int-list.js';
import { machineInfo, speedText } from './machine.js';
import { withNetns } from './netns.js';
import { median } from './stats.js';

const CHAINS_TABLE = 'nftlink-commitwalk';
const SET_TABLE = 'nftlink-commitwalk-set';
const FAMILY = 'ip' as const;
/** Larger than any last-level cache of the machines this runs on: writing it evicts the kernel's structures. */
const EVICT_BYTES = 64 << 20;
/** Its namespaces' prefix: its own, so that its test can tell them from other probes' running beside it. */
const NETNS_PREFIX = 'nftlink-cw';
/** Chains per setup transaction: bounded, as the proxy's cold start is. */
const SETUP_PART = 5000;

type Caches = 'warm' | 'cold';

function options(): { chainCounts: number[]; runs: number } {
  const { values } = parseArgs({
    options: {
      chains: { type: 'string', default: '0,1000,10000,30000' },
      runs: { type: 'string', default: '41' },
    },
  });
  return { chainCounts: intList(values.chains!, 'commit-walk', 'chains', 0).sort((a, b) => a - b), runs: intList(values.runs!, 'commit-walk', 'runs', 1)[0]! };
}

const set: NftSet = { family: FAMILY, table: SET_TABLE, name: 's', key: [types.ipv4_addr] };
const element = { key: ['198.18.0.1'] };

/** The chains' table in parts of SETUP_PART chains, each chain with one rule, then the set's table. */
function setup(chains: number): Transaction[] {
  const txs: Transaction[] = [];
  for (let from = 0; from < chains; from += SETUP_PART) {
    const tx = from === 0 ? new Transaction().add({ table: { family: FAMILY, name: CHAINS_TABLE } }) : new Transaction();
    for (let i = from; i < Math.min(chains, from + SETUP_PART); i++) {
      const chain = { family: FAMILY, table: CHAINS_TABLE, name: `c${i}` };
      tx.add({ chain }).add({ rule: rule(FAMILY).match(meta.l4proto, 'tcp').accept().rule(CHAINS_TABLE, chain.name) });
    }
    txs.push(tx);
  }
  txs.push(new Transaction().add({ table: { family: FAMILY, name: SET_TABLE } }).add({ set }));
  return txs;
}

/** Touches every cache line of `buf`: what the caches held before is gone. */
function evict(buf: Uint8Array): void {
  for (let i = 0; i < buf.length; i += 64) buf[i] = (buf[i]! + 1) & 0xff;
}

async function measure(chains: number, runs: number, junk: Uint8Array): Promise<Record<Caches, number[]>> {
  return withNetns(1, (netns) => measureIn(netns, chains, runs, junk), NETNS_PREFIX);
}

async function measureIn(netns: string, chains: number, runs: number, junk: Uint8Array): Promise<Record<Caches, number[]>> {
  const nft = Nftables.open({ netns });
  try {
    for (const tx of setup(chains)) await nft.commit(tx);
    const out: Record<Caches, number[]> = { warm: [], cold: [] };
    for (const caches of ['warm', 'cold'] as const) {
      for (let r = 0; r < runs; r++) {
        // Added on even runs, deleted on odd ones: the set ends as it began.
        const tx = r % 2 === 0 ? new Transaction().add({ set, elements: [element] }) : new Transaction().delete({ set, elements: [element] });
        tx.encode(); // encoded before the clock starts: the addon's and the kernel's part is timed
        if (caches === 'cold') evict(junk);
        const t0 = performance.now();
        await nft.commit(tx);
        out[caches].push(performance.now() - t0);
      }
    }
    return out;
  } finally {
    nft.close();
  }
}

async function main(): Promise<void> {
  const { chainCounts, runs } = options();
  const m = machineInfo();
  const junk = new Uint8Array(EVICT_BYTES);
  const results = new Map<number, Record<Caches, number>>();
  for (const chains of chainCounts) {
    const ms = await measure(chains, runs, junk);
    results.set(chains, { warm: median(ms.warm), cold: median(ms.cold) });
    process.stderr.write(`[commit-walk] ${chains} chains: warm ${ms.warm.map((x) => x.toFixed(3)).join(' ')} ms; cold ${ms.cold.map((x) => x.toFixed(3)).join(' ')} ms\n`);
  }
  console.log(`bench:commit-walk: Linux ${m.kernel}, ${m.cpuCount} CPUs, ${speedText(m)}; medians of ${runs} commits of one element, beside a table of C chains`);
  console.log('');
  console.log(`${'chains'.padEnd(10)}${'warm caches'.padStart(16)}${'cold caches'.padStart(16)}`);
  for (const chains of chainCounts) {
    const r = results.get(chains)!;
    console.log(`${String(chains).padEnd(10)}${`${r.warm.toFixed(3)} ms`.padStart(16)}${`${r.cold.toFixed(3)} ms`.padStart(16)}`);
  }
  const [fewest, most] = [chainCounts[0]!, chainCounts[chainCounts.length - 1]!];
  if (most > fewest) {
    const per = (c: Caches): string => (((results.get(most)![c] - results.get(fewest)![c]) * 1e6) / (most - fewest)).toFixed(1);
    console.log('');
    console.log(`per chain in the namespace (${fewest} -> ${most} chains): ${per('warm')} ns warm, ${per('cold')} ns cold, at every commit`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
