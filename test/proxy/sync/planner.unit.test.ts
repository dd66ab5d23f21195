// The sync planner on its own, against the in-memory fake (nftlink/testing): a plan is built from
// the model and a view of the kernel, committed to the fake, and the next plan is read against the
// fake's dump, so no root and no namespace is needed. Both layouts.

import { describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/nft/index.js';
import { silentLogger } from '../../../src/logging/logger.js';
import { createLayout, type LayoutName } from '../../../src/proxy/layout/index.js';
import { FakeNftables } from '../../../src/testing/index.js';
import { KernelView } from '../../../src/proxy/sync/kernel-view.js';
import type { Plan } from '../../../src/proxy/sync/plan.js';
import { SyncPlanner } from '../../../src/proxy/sync/planner.js';
import { Exclusions } from '../../../src/proxy/sync/refusals.js';
import { BenchModel, benchConfig, change } from '../../fixtures/scale-model.js';

function setup(layoutName: LayoutName) {
  const fake = new FakeNftables();
  const layout = createLayout(layoutName);
  const cfg = benchConfig();
  const planner = new SyncPlanner(layout, cfg, new Exclusions(), { has: () => false }, silentLogger);
  const read = (): Promise<KernelView> => KernelView.read(fake, 'ip', cfg.table, layout);
  /** Commits the plan to the fake and records it as committed, as FamilySync does. */
  const commit = async (view: KernelView, plan: Plan): Promise<void> => {
    const tx = plan.seal();
    if (tx) await fake.commit(tx);
    view.apply(plan);
    planner.committedPlan(plan);
  };
  return { fake, planner, read, commit };
}

/** What an operation writes, as `verb kind name` (rules and elements by their chain or set). */
function describeOp(op: Operation): string {
  switch (op.kind) {
    case 'rule':
      return `${op.verb} rule ${op.rule.chain}`;
    case 'element':
      return `${op.verb} element ${op.set.name}`;
    case 'chain':
      return `${op.verb} chain ${op.chain.name}`;
    case 'set':
      return `${op.verb} set ${op.set.name}`;
    default:
      return `${op.verb} ${op.kind}`;
  }
}

describe.each(['slots', 'kube-proxy'] as const)('sync planner, %s layout', (layoutName) => {
  it('plans a full sync that programs an empty table, and nothing once the kernel holds it', async () => {
    const { fake, planner, read, commit } = setup(layoutName);
    const model = new BenchModel(20, 3);
    let view = await read();
    const first = planner.newPlan(view);
    await planner.full(model.state(), view, first);
    expect(first.tx.operations.some((op) => op.kind === 'table' && op.verb === 'add')).toBe(true);
    // The fixed chains, and the services' (the slots layout's ClusterIP-only ports share one).
    expect(first.stats.chainsWritten).toBeGreaterThan(10);
    expect(first.tx.operations.some((op) => op.kind === 'element' && op.set.name === 'service-ips' && [...op.elements].length === 20)).toBe(true);
    await commit(view, first);
    const generation = await fake.generation();

    // A restart: a new planner, the kernel read back. Nothing differs, so nothing is planned.
    const restarted = new SyncPlanner(createLayout(layoutName), benchConfig(), new Exclusions(), { has: () => false }, silentLogger);
    view = await KernelView.read(fake, 'ip', benchConfig().table, createLayout(layoutName));
    const again = restarted.newPlan(view);
    await restarted.full(model.state(), view, again);
    expect(again.tx.operations.map(describeOp)).toEqual([]);
    expect(await fake.generation()).toBe(generation);

    // The same planner, planning against the view its commit left: nothing either.
    const view2 = await read();
    const third = planner.newPlan(view2);
    await planner.full(model.state(), view2, third);
    expect(third.operations).toBe(0);
  });

  it('plans a partial sync that touches only the changed service port', async () => {
    const { fake, planner, read, commit } = setup(layoutName);
    const model = new BenchModel(20, 3);
    const view = await read();
    const first = planner.newPlan(view);
    await planner.full(model.state(), view, first);
    await commit(view, first);

    const [id] = model.pick(1, 4);
    model.replaceEndpoint(id!);
    const partial = planner.newPlan(view);
    planner.partial(model.state(), change({ endpoints: [id!] }), view, partial);
    const ops = partial.tx.operations;
    expect(ops.length).toBeGreaterThan(0);
    // Every chain or rule written is the changed service port's own (its chain names carry its id).
    const service = (portId: string): string => `${portId.split(':')[0]}/`; // namespace/name/ in chain names
    for (const op of ops) if (op.kind === 'rule' || op.kind === 'chain') expect(describeOp(op)).toContain(service(id!));
    // The other 19 services' chains are not among them.
    const written = ops.map(describeOp).join('\n');
    for (const other of model.pick(20, 0).filter((x) => x !== id)) expect(written).not.toContain(service(other));
    await commit(view, partial);

    // The fake now holds what a full plan of the changed model would write: a full plan is empty.
    const check = await read();
    const full = planner.newPlan(check);
    await planner.full(model.state(), check, full);
    expect(full.tx.operations.map(describeOp)).toEqual([]);
    expect(fake.render()).toContain(model.endpoints.get(id!)![0]!.ip);
  });

  it('hands a cold start over in parts, the dispatch elements in the last one', async () => {
    const { planner, read } = setup(layoutName);
    const model = new BenchModel(60, 2);
    const view = await read();
    const plan = planner.newPlan(view, 20);
    const parts: Operation[][] = [];
    // As FamilySync.part: each part the planner cuts takes the elements so far and is sealed.
    await planner.full(model.state(), view, plan, async (p, last) => {
      p.queueElements(planner.index, last);
      const tx = p.seal();
      if (tx) parts.push([...tx.operations]);
    });
    expect(parts.length).toBeGreaterThan(2);
    const dispatch = (ops: Operation[]): boolean => ops.some((op) => op.kind === 'element' && op.set.name === 'service-ips');
    expect(parts.slice(0, -1).some(dispatch)).toBe(false);
    expect(dispatch(parts.at(-1)!)).toBe(true);
    // Each service port's chain and its rules are in one part, never split across two.
    const partOf = new Map<string, Set<number>>();
    parts.forEach((ops, i) => {
      for (const op of ops) if (op.kind === 'rule') (partOf.get(op.rule.chain) ?? partOf.set(op.rule.chain, new Set()).get(op.rule.chain)!).add(i);
    });
    for (const [chain, inParts] of partOf) expect({ chain, parts: inParts.size }).toEqual({ chain, parts: 1 });
  });
});
