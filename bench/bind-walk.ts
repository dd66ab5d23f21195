// `npm run bench:bind-walk`: what the kernel charges a rule for binding a map, against the map's size.
//
// Every rule whose lookup loads data from a named map (a verdict map, or `dnat to numgen ... map @m`
// as the slots layout writes) makes nf_tables_bind_set walk all of the map's elements
// (nf_tables_bind_check_setelem, Linux 6.18), so writing R rules bound to a map of M elements
// costs R x M steps, whatever else the commit does. The function has a shortcut for a map already
// bound from the same chain, but it compares the bindings' chain with the new binding's before
// that one is assigned, so it never fires: rules added to ONE chain pay the walk as rules spread
// over R chains do. This probe shows both, with nothing else in the commit: the table has no base
// chain, so the commit validates nothing (no nft_table_validate), and the map's elements are there
// before the timed commit. Why it matters: it bounds how large a shared endpoint map may be (the
// slots layout's buckets of 64 service chains), and it is the evidence for an upstream report.
//
// In one process, one fresh namespace per map size. Per run: one commit that adds R rules bound to
// the map (timed), then the chains are flushed (not timed). Prints medians and the cost per element
// walked: (time at M - time at the smallest M) / (R x (M - smallest M)).

import { parseArgs } from 'node:util';
import { meta, Nftables, numgen, rule, Transaction, types, type NftSet, type SetElement } from '../src/nft/index.js';
import { endpointAddr } from './addresses.js';
import { intList } from './int-list.js';
import { machineInfo, speedText } from './machine.js';
import { withNetns } from './netns.js';
import { median } from './stats.js';

const TABLE = 'nftlink-bindwalk';
/** Its namespaces' prefix: its own, so that its test can tell them from other benchmarks' running beside it. */
const NETNS_PREFIX = 'nftlink-bw';
const FAMILY = 'ip' as const;
const MAP = 'eps';
/** Endpoints per rule's numgen, as a service with 5 endpoints in the slots layout. */
const PICK = 5;

type Placement = 'one chain each' | 'all in one chain';

function options(): { sizes: number[]; rules: number; runs: number } {
  const { values } = parseArgs({
    options: {
      elements: { type: 'string', default: '300,3000,30000' },
      rules: { type: 'string', default: '200' },
      runs: { type: 'string', default: '7' },
    },
  });
  return {
    sizes: intList(values.elements!, 'bind-walk', 'elements', PICK).sort((a, b) => a - b),
    rules: intList(values.rules!, 'bind-walk', 'rules', 1)[0]!,
    runs: intList(values.runs!, 'bind-walk', 'runs', 1)[0]!,
  };
}

const map: NftSet = { family: FAMILY, table: TABLE, name: MAP, key: [types.integer(4, 'host')], data: [types.ipv4_addr, types.inet_service] };
const chainName = (i: number): string => `c${i}`;

function mapElements(count: number): SetElement[] {
  const out: SetElement[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = { key: [i], value: [endpointAddr(i % 65_536), 8080] };
  return out;
}

/** The table, R regular chains and the map with its elements: committed before anything is timed. */
function setup(elements: number, chains: number): Transaction {
  const tx = new Transaction().add({ table: { family: FAMILY, name: TABLE } }).add({ set: map });
  for (let i = 0; i < chains; i++) tx.add({ chain: { family: FAMILY, table: TABLE, name: chainName(i) } });
  return tx.add({ set: map, elements: mapElements(elements) });
}

/** R rules, each `meta l4proto tcp dnat ip to numgen random mod 5 offset K map @eps`, in R chains or in the first. */
function bindingRules(count: number, elements: number, placement: Placement): Transaction {
  const tx = new Transaction();
  for (let i = 0; i < count; i++) {
    const offset = (i * PICK) % (elements - PICK + 1);
    const chain = placement === 'one chain each' ? chainName(i) : chainName(0);
    tx.add({ rule: rule(FAMILY).match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', PICK, offset), map: { name: MAP, set: map } }).rule(TABLE, chain) });
  }
  return tx;
}

function flushChains(count: number): Transaction {
  const tx = new Transaction();
  for (let i = 0; i < count; i++) tx.flush({ chain: { family: FAMILY, table: TABLE, name: chainName(i) } });
  return tx;
}

async function measure(elements: number, placement: Placement, rules: number, runs: number): Promise<number[]> {
  return withNetns(1, (netns) => measureIn(netns, elements, placement, rules, runs), NETNS_PREFIX);
}

async function measureIn(netns: string, elements: number, placement: Placement, rules: number, runs: number): Promise<number[]> {
  const nft = Nftables.open({ netns });
  try {
    await nft.commit(setup(elements, rules));
    const ms: number[] = [];
    for (let r = 0; r < runs; r++) {
      const tx = bindingRules(rules, elements, placement);
      tx.encode(); // encoded before the clock starts: only the kernel's part is timed
      const t0 = performance.now();
      await nft.commit(tx);
      ms.push(performance.now() - t0);
      await nft.commit(flushChains(rules));
    }
    return ms;
  } finally {
    nft.close();
  }
}

async function main(): Promise<void> {
  const { sizes, rules, runs } = options();
  const m = machineInfo();
  const placements: Placement[] = ['one chain each', 'all in one chain'];
  const results = new Map<string, number>();
  for (const elements of sizes) {
    for (const placement of placements) {
      const ms = await measure(elements, placement, rules, runs);
      results.set(`${elements} ${placement}`, median(ms));
      process.stderr.write(`[bind-walk] ${elements} elements, ${rules} rules ${placement}: ${ms.map((x) => x.toFixed(1)).join(' ')} ms\n`);
    }
  }
  console.log(`bench:bind-walk: Linux ${m.kernel}, ${m.cpuCount} CPUs, ${speedText(m)}; medians of ${runs} commits, each adding ${rules} rules bound to one map`);
  console.log('');
  console.log(`${'map elements'.padEnd(14)}${placements.map((p) => `rules ${p}`.padStart(26)).join('')}`);
  for (const elements of sizes) {
    console.log(`${String(elements).padEnd(14)}${placements.map((p) => `${results.get(`${elements} ${p}`)!.toFixed(2)} ms`.padStart(26)).join('')}`);
  }
  const [small, large] = [sizes[0]!, sizes[sizes.length - 1]!];
  if (large > small) {
    console.log('');
    for (const p of placements) {
      const perElementNs = ((results.get(`${large} ${p}`)! - results.get(`${small} ${p}`)!) * 1e6) / (rules * (large - small));
      console.log(`rules ${p}: ${perElementNs.toFixed(1)} ns per element walked per rule (${small} -> ${large} elements)`);
    }
    console.log('A shortcut that worked would make "all in one chain" cost one walk, not one per rule.');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
