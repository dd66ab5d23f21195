// The ruleset shapes of the data-plane benchmark, each programmed into a node namespace that holds
// nothing else: nftlink's `slots` and `kube-proxy` layouts over netlink (FamilySync, one full sync,
// as the proxy's first sync), kube-proxy's iptables mode through iptables-legacy-restore, and the
// `floor` control (floor-shape.ts: one DNAT rule for the whole service CIDR, nothing per service).
// After loading, the namespace is checked to hold that one shape and nothing of the others.

import { spawnSync } from 'node:child_process';
import { Nftables } from '../../src/nft/client.js';
import { createLayout, type LayoutName } from '../../src/proxy/layout/index.js';
import type { LayoutConfig } from '../../src/proxy/layout/types.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { ProxyState } from '../../src/proxy/model/types.js';
import { FamilySync } from '../../src/proxy/sync/family-sync.js';
import { inNetns } from '../netns.js';
import { floorTransaction } from './floor-shape.js';
import { iptablesRestoreText } from './iptables-shape.js';

export const SHAPES = ['slots', 'kube-proxy', 'iptables', 'floor'] as const;
export type ShapeName = (typeof SHAPES)[number];

export const SHAPE_TITLE: Record<ShapeName, string> = {
  slots: 'nftlink slots',
  'kube-proxy': 'nftlink kube-proxy',
  iptables: 'iptables (kube-proxy)',
  floor: 'floor (1 DNAT rule)',
};

const IPTABLES_RESTORE = 'iptables-legacy-restore';
const IPTABLES_SAVE = 'iptables-legacy-save';

export interface Loaded {
  /** Wall time of the load: FamilySync.sync, or the iptables-legacy-restore process. */
  loadS: number;
  /** What was loaded: operations in the transaction, or lines of iptables-restore input. */
  size: string;
}

/** Throws a clear error before any namespace is made when a shape cannot be loaded on this machine. */
export function checkShapes(shapes: readonly ShapeName[]): void {
  for (const s of shapes) {
    if (s === 'iptables') {
      for (const tool of [IPTABLES_RESTORE, IPTABLES_SAVE]) {
        const r = spawnSync(tool, ['--version'], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`bench: ${tool} is missing, and the iptables shape needs it (Debian: apt-get install iptables; scripts/setup.sh installs it)`);
      }
    } else if (s !== 'floor') {
      createLayout(s);
    }
  }
}

function run(netns: string, cmd: string, args: string[], input?: string): string {
  const [nsenter, ...pre] = inNetns(netns);
  const r = spawnSync(nsenter!, [...pre, cmd, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`bench: ${cmd} in ${netns} failed (${r.status}): ${(r.stderr || r.error?.message || '').slice(0, 2000)}`);
  return r.stdout;
}

/** The nftables tables of a namespace, as "family name". */
async function nftTables(netns: string): Promise<string[]> {
  const nft = Nftables.open({ netns });
  try {
    return (await nft.dump({ elements: false })).tables.map((t) => `${t.family} ${t.name}`);
  } finally {
    nft.close();
  }
}

function iptablesRules(netns: string): number {
  return run(netns, IPTABLES_SAVE, []).split('\n').filter((l) => l.startsWith('-A ')).length;
}

async function loadNft(shape: LayoutName, netns: string, state: ProxyState, cfg: LayoutConfig): Promise<Loaded> {
  const nft = Nftables.open({ netns });
  try {
    const t0 = performance.now();
    const result = await new FamilySync(nft, createLayout(shape), cfg, silentLogger).sync(state, undefined);
    const loadS = (performance.now() - t0) / 1000;
    if (result.excluded) throw new Error(`bench: the ${shape} layout left ${result.excluded} service port(s) out`);
    return { loadS, size: `${result.operations} netlink operations` };
  } finally {
    nft.close();
  }
}

/** The control: the same pods behind one rule, whatever the number of services in `state`. */
async function loadFloor(netns: string, state: ProxyState, cfg: LayoutConfig): Promise<Loaded> {
  const pods = [...new Set([...state.endpoints.values()].flatMap((eps) => eps.map((e) => e.ip)))];
  const tx = floorTransaction(cfg.table, pods);
  const nft = Nftables.open({ netns });
  try {
    const t0 = performance.now();
    await nft.commit(tx);
    return { loadS: (performance.now() - t0) / 1000, size: `${tx.size} netlink operations, for any number of services` };
  } finally {
    nft.close();
  }
}

export async function loadShape(shape: ShapeName, netns: string, state: ProxyState, cfg: LayoutConfig): Promise<Loaded> {
  let loaded: Loaded;
  if (shape === 'iptables') {
    const text = iptablesRestoreText(state, cfg);
    const t0 = performance.now();
    run(netns, IPTABLES_RESTORE, [], text);
    loaded = { loadS: (performance.now() - t0) / 1000, size: `${text.split('\n').length - 1} lines of iptables-restore input` };
  } else if (shape === 'floor') {
    loaded = await loadFloor(netns, state, cfg);
  } else {
    loaded = await loadNft(shape, netns, state, cfg);
  }
  // One shape per node namespace: the benchmark would measure the sum of two otherwise.
  const tables = await nftTables(netns);
  const want = shape === 'iptables' ? [] : [`ip ${cfg.table}`];
  if (tables.join(',') !== want.join(',')) throw new Error(`bench: node namespace for ${shape} holds nftables tables [${tables.join(', ')}], expected [${want.join(', ')}]`);
  if (shape !== 'iptables' && spawnSync(IPTABLES_SAVE, ['--version']).status === 0 && iptablesRules(netns) > 0) {
    throw new Error(`bench: node namespace for ${shape} holds iptables rules`);
  }
  return loaded;
}
