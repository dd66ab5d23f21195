// FakeNftables against the kernel (needs root: a fresh network namespace): the same transactions,
// refused ones included, go to both, and after every step both must agree on the outcome (success
// with the echoed handles, or the same refusals: errno, operation, element and explained reason),
// on the generation's step, on every object's handle and on the ruleset as `nft -f` text. Nothing
// is normalized: anonymous set names, which differ by design (the encoder's prefix, the fake's
// counter), never appear in the render (inline sets render by their elements).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NftCommitError, NftGenerationError, Nftables, renderRuleset, rule, ip, tcp, Transaction, types } from '../../src/index.js';
import type { Chain, NftConnection, NftSet, Rule, Ruleset, Table } from '../../src/index.js';
import { FakeNftables } from '../../src/testing/index.js';
import { Netns } from '../helpers/netns.js';

const { ipv4_addr, inet_proto, inet_service } = types;
const table: Table = { family: 'ip', name: 'eq' };
const chain = (name: string, base?: Chain['base']): Chain => (base ? { family: 'ip', table: 'eq', name, base } : { family: 'ip', table: 'eq', name });
const input = chain('input', { type: 'filter', hook: 'input', priority: 0, policy: 'accept' });
const addrs: NftSet = { family: 'ip', table: 'eq', name: 'addrs', key: [ipv4_addr], size: 3 };
const ports: NftSet = { family: 'ip', table: 'eq', name: 'ports', key: [ipv4_addr], data: [inet_service] };
const jumps: NftSet = { family: 'ip', table: 'eq', name: 'jumps', key: [ipv4_addr], data: 'verdict' };
const services: NftSet = { family: 'ip', table: 'eq', name: 'services', key: [ipv4_addr, inet_proto, inet_service], data: [ipv4_addr, inet_service] };
const ranges: NftSet = { family: 'ip', table: 'eq', name: 'ranges', key: [ipv4_addr], flags: ['interval'] };
const inInput = (r: ReturnType<typeof rule>, comment: string): Rule => r.rule('eq', 'input', comment);

/** One step: the transaction, built for a connection whose rules' handles `handleOf` finds by comment. */
interface Step {
  name: string;
  tx(handleOf: (comment: string) => number): Transaction;
}

const steps: Step[] = [
  {
    name: 'the objects',
    tx: () =>
      new Transaction()
        .add({ table })
        .add({ chain: input })
        .add({ chain: chain('a') })
        .add({ chain: chain('b') })
        .add({ set: addrs })
        .add({ set: ports })
        .add({ set: jumps })
        .add({ set: services })
        .add({ set: ranges }),
  },
  { name: 'add of an existing table', tx: () => new Transaction().add({ table }) },
  { name: 'add of an existing chain', tx: () => new Transaction().add({ chain: chain('a') }) },
  { name: 'add of an existing base chain', tx: () => new Transaction().add({ chain: input }) },
  { name: 'add of an existing set', tx: () => new Transaction().add({ set: addrs }) },
  { name: 'flush of an empty set', tx: () => new Transaction().flush({ set: addrs }) },
  { name: 'flush of an empty chain', tx: () => new Transaction().flush({ chain: chain('a') }) },
  { name: 'flush of a table without rules', tx: () => new Transaction().flush({ table }) },
  { name: 'create of an existing table', tx: () => new Transaction().create({ table }) },
  { name: 'create of an existing chain', tx: () => new Transaction().create({ chain: chain('a') }) },
  { name: 'create of an existing set', tx: () => new Transaction().create({ set: addrs }) },
  { name: 'add of a set with another key', tx: () => new Transaction().add({ set: { ...addrs, key: [inet_service] } }) },
  { name: 'add of a map with other data', tx: () => new Transaction().add({ set: { ...ports, data: [ipv4_addr] } }) },
  { name: 'add of a set with other flags', tx: () => new Transaction().add({ set: { ...addrs, flags: ['timeout'] } }) },
  { name: 'add of a base chain at another priority', tx: () => new Transaction().add({ chain: chain('input', { type: 'filter', hook: 'input', priority: 10 }) }) },
  { name: 'add of a base chain on another hook', tx: () => new Transaction().add({ chain: chain('input', { type: 'filter', hook: 'output', priority: 0 }) }) },
  { name: 'add of a base chain of another type', tx: () => new Transaction().add({ chain: chain('input', { type: 'nat', hook: 'input', priority: 0 }) }) },
  { name: 'add of a regular chain as a base chain', tx: () => new Transaction().add({ chain: chain('a', { type: 'filter', hook: 'input', priority: 0 }) }) },
  { name: 'a base chain changes its policy', tx: () => new Transaction().add({ chain: chain('input', { type: 'filter', hook: 'input', priority: 0, policy: 'drop' }) }) },
  { name: 'delete of a missing chain', tx: () => new Transaction().delete({ chain: chain('missing') }) },
  { name: 'destroy of a missing chain', tx: () => new Transaction().destroy({ chain: chain('missing') }) },
  { name: 'destroy of a chain in a missing table', tx: () => new Transaction().destroy({ chain: { family: 'ip', table: 'nothere', name: 'c' } }) },
  { name: 'delete of a missing table', tx: () => new Transaction().delete({ table: { family: 'ip', name: 'nothere' } }) },
  { name: 'destroy of a missing table', tx: () => new Transaction().destroy({ table: { family: 'ip', name: 'nothere' } }) },
  { name: 'delete of a missing set', tx: () => new Transaction().delete({ set: { ...addrs, name: 'nothere' } }) },
  { name: 'destroy of a missing set', tx: () => new Transaction().destroy({ set: { ...addrs, name: 'nothere' } }) },
  {
    name: 'rules that jump, look up and map',
    tx: () =>
      new Transaction()
        .add({ rule: inInput(rule('ip').match(tcp.dport, 80).jump('a'), 'jump') }, { echo: true })
        .add({ rule: inInput(rule('ip').inSet(ip.saddr, 'addrs').accept(), 'lookup') }, { echo: true })
        .add({ rule: inInput(rule('ip').vmap(ip.daddr, 'jumps'), 'vmap') }),
  },
  { name: 'delete of a chain a rule jumps to', tx: () => new Transaction().delete({ chain: chain('a') }) },
  { name: 'delete of a set a rule uses', tx: () => new Transaction().delete({ set: addrs }) },
  { name: 'a jump to a missing chain', tx: () => new Transaction().add({ rule: inInput(rule('ip').jump('missing'), 'bad') }) },
  { name: 'a jump to a base chain', tx: () => new Transaction().add({ rule: rule('ip').jump('input').rule('eq', 'a') }) },
  { name: 'a verdict map element to a base chain', tx: () => new Transaction().add({ set: jumps, elements: [{ key: ['198.18.0.9'], value: { kind: 'goto', chain: 'input' } }] }) },
  { name: 'a lookup in a missing set', tx: () => new Transaction().add({ rule: inInput(rule('ip').inSet(ip.saddr, 'missing').accept(), 'bad') }) },
  { name: 'a rule in a missing chain', tx: () => new Transaction().add({ rule: rule('ip').accept().rule('eq', 'missing') }) },
  { name: 'a rule in a missing table', tx: () => new Transaction().add({ rule: rule('ip').accept().rule('nothere', 'c') }) },
  { name: 'elements up to the size', tx: () => new Transaction().add({ set: addrs, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }, { key: ['198.18.0.3'] }] }) },
  { name: 'an element past the size', tx: () => new Transaction().add({ set: addrs, elements: [{ key: ['198.18.0.4'] }] }) },
  { name: 'add of an existing element', tx: () => new Transaction().add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] }) },
  { name: 'create of an existing element', tx: () => new Transaction().create({ set: addrs, elements: [{ key: ['198.18.0.2'] }] }) },
  { name: 'delete of a missing element', tx: () => new Transaction().delete({ set: addrs, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.9'] }] }) },
  { name: 'destroy of a missing element', tx: () => new Transaction().destroy({ set: addrs, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.9'] }] }) },
  { name: 'map elements', tx: () => new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.1'], value: [80] }, { key: ['198.18.0.2'], value: [443] }] }) },
  // Elements the caller encodes with a set object other than the kernel's.
  { name: 'a map element without data', tx: () => new Transaction().add({ set: { ...ports, data: undefined }, elements: [{ key: ['198.18.0.5'] }] }) },
  { name: 'a set element with data', tx: () => new Transaction().add({ set: { ...addrs, data: [inet_service] }, elements: [{ key: ['198.18.0.5'], value: [1] }] }) },
  { name: 'a map element with a verdict', tx: () => new Transaction().add({ set: { ...ports, data: 'verdict' }, elements: [{ key: ['198.18.0.5'], value: { kind: 'accept' } }] }) },
  { name: 'an element of another key type', tx: () => new Transaction().add({ set: { ...addrs, key: [inet_service] }, elements: [{ key: [80] }] }) },
  { name: 'add of a map element with the same data', tx: () => new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.1'], value: [80] }] }) },
  { name: 'add of a map element with other data', tx: () => new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.2'], value: [444] }] }) },
  { name: 'a verdict map element to a chain', tx: () => new Transaction().add({ set: jumps, elements: [{ key: ['198.18.0.1'], value: { kind: 'goto', chain: 'b' } }] }) },
  { name: 'a verdict map element to a missing chain', tx: () => new Transaction().add({ set: jumps, elements: [{ key: ['198.18.0.2'], value: { kind: 'jump', chain: 'missing' } }] }) },
  { name: 'delete of a chain a map element goes to', tx: () => new Transaction().delete({ chain: chain('b') }) },
  { name: 'no elements for a missing set', tx: () => new Transaction().add({ set: { ...addrs, name: 'nothere' }, elements: [] }).delete({ set: { ...addrs, name: 'nothere' }, elements: [] }) },
  { name: 'no elements to add', tx: () => new Transaction().add({ set: ports, elements: [] }) },
  { name: 'no elements to destroy in a missing set', tx: () => new Transaction().destroy({ set: { ...addrs, name: 'nothere' }, elements: [] }) },
  { name: 'elements in a missing set', tx: () => new Transaction().add({ set: { ...addrs, name: 'nothere' }, elements: [{ key: ['198.18.0.1'] }] }) },
  { name: 'elements added with an existing set', tx: () => new Transaction().add({ set: { ...ports, elements: [{ key: ['198.18.0.3'], value: [8080] }] } }) },
  {
    name: 'rules at positions',
    tx: (h) =>
      new Transaction()
        .insert({ rule: { ...inInput(rule('ip').match(tcp.dport, 22).drop(), 'before-lookup'), position: h('lookup') } }, { echo: true })
        .add({ rule: { ...inInput(rule('ip').match(tcp.dport, 23).drop(), 'after-jump'), position: h('jump') } })
        .insert({ rule: inInput(rule('ip').match(tcp.dport, 21).drop(), 'first') }),
  },
  { name: 'replace of a rule', tx: (h) => new Transaction().replace({ rule: { ...inInput(rule('ip').match(tcp.dport, 2222).drop(), 'replaced'), handle: h('before-lookup') } }, { echo: true }) },
  { name: 'delete of a rule', tx: (h) => new Transaction().delete({ rule: { ...inInput(rule('ip'), 'x'), handle: h('first') } }) },
  { name: 'delete of a missing rule', tx: () => new Transaction().delete({ rule: { ...inInput(rule('ip'), 'x'), handle: 999999 } }) },
  { name: 'destroy of a missing rule', tx: () => new Transaction().destroy({ rule: { ...inInput(rule('ip'), 'x'), handle: 999999 } }) },
  { name: 'a rule at a missing position', tx: () => new Transaction().add({ rule: { ...inInput(rule('ip').drop(), 'bad'), position: 999999 } }) },
  {
    name: 'rules with inline sets',
    tx: () =>
      new Transaction()
        .add({ rule: inInput(rule('ip').lookupElements([ip.saddr], [{ key: ['198.18.1.1'] }, { key: ['198.18.1.2'] }]).accept(), 'inline') }, { echo: true })
        .add({ rule: inInput(rule('ip').vmap(ip.saddr, [{ key: ['198.18.1.3'], value: { kind: 'jump', chain: 'a' } }]), 'inline-vmap') }),
  },
  { name: 'an inline verdict map to a missing chain', tx: () => new Transaction().add({ rule: inInput(rule('ip').vmap(ip.saddr, [{ key: ['198.18.1.4'], value: { kind: 'jump', chain: 'missing' } }]), 'bad') }) },
  {
    name: 'one refusal in a batch of good operations',
    tx: () =>
      new Transaction()
        .add({ chain: chain('c') })
        .add({ set: addrs, elements: [{ key: ['198.18.0.7'] }] })
        .add({ rule: rule('ip').jump('a').rule('eq', 'c') })
        .delete({ chain: chain('missing') })
        .add({ chain: chain('d') }),
  },
  {
    name: 'a concatenation map and an interval set',
    tx: () =>
      new Transaction()
        .add({ set: services, elements: [{ key: ['198.18.0.10', 'tcp', 80], value: [ '198.18.0.20', 8080] }, { key: ['198.18.0.11', 'udp', 53], value: ['198.18.0.21', 5353] }] })
        .add({ set: ranges, elements: [{ key: ['198.18.4.0/24'] }, { key: ['198.18.6.1-198.18.6.9'] }] }),
  },
  { name: 'an interval inside another', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.4.128/25'] }] }) },
  { name: 'an address inside an interval', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.6.5'] }] }) },
  { name: 'an interval across the end of another', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.6.8-198.18.6.20'] }] }) },
  { name: 'an interval that touches none', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.6.12-198.18.6.20'] }] }) },
  // Both markers at .10 and at .12 (the kernel's), read back as the three ranges they are.
  { name: 'an interval between two it touches', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.6.10-198.18.6.11'] }] }) },
  { name: 'an address after an interval it touches', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.6.21'] }] }) },
  { name: 'add of an existing interval', tx: () => new Transaction().add({ set: ranges, elements: [{ key: ['198.18.4.0/24'] }] }) },
  { name: 'create of an existing interval', tx: () => new Transaction().create({ set: ranges, elements: [{ key: ['198.18.4.0/24'] }] }) },
  { name: 'add of an existing concatenation key with other data', tx: () => new Transaction().add({ set: services, elements: [{ key: ['198.18.0.10', 'tcp', 80], value: ['198.18.0.20', 8081] }] }) },
  { name: 'delete of a concatenation key and an interval', tx: () => new Transaction().delete({ set: services, elements: [{ key: ['198.18.0.11', 'udp', 53] }] }).delete({ set: ranges, elements: [{ key: ['198.18.4.0/24'] }] }) },
  { name: 'delete of no elements', tx: () => new Transaction().add({ set: addrs, elements: [{ key: ['198.18.0.8'] }] }).delete({ set: addrs, elements: [] }) },
  { name: 'destroy of no elements', tx: () => new Transaction().destroy({ set: addrs, elements: [] }).destroy({ set: ranges, elements: [] }) },
  { name: 'flush of a set', tx: () => new Transaction().flush({ set: addrs }) },
  { name: 'flush of a chain', tx: () => new Transaction().add({ rule: rule('ip').accept().rule('eq', 'b') }).flush({ chain: chain('input') }) },
  { name: 'delete of a chain with rules', tx: () => new Transaction().add({ chain: chain('e') }).add({ rule: rule('ip').accept().rule('eq', 'e') }).add({ rule: rule('ip').drop().rule('eq', 'e') }) },
  { name: 'delete of a chain with rules (2)', tx: () => new Transaction().delete({ chain: chain('e') }) },
  { name: 'flush of a table', tx: () => new Transaction().add({ rule: rule('ip').accept().rule('eq', 'b') }).add({ rule: inInput(rule('ip').jump('a'), 'again') }).flush({ table }) },
  { name: 'flush of a missing chain', tx: () => new Transaction().flush({ chain: chain('missing') }) },
  { name: 'delete of a table', tx: () => new Transaction().add({ rule: inInput(rule('ip').jump('a'), 'again') }).delete({ table }) },
];

/**
 * What a commit came to, comparable: 'ok' with the echoed rules' handles, or each refusal's errno,
 * operation, element and reason.
 */
async function outcome(conn: NftConnection, tx: Transaction): Promise<string[]> {
  try {
    const { ruleHandles } = await conn.commit(tx);
    return [`ok ${[...ruleHandles].map(([op, handle]) => `${op}:${handle}`).join(' ')}`.trim()];
  } catch (err) {
    if (!(err instanceof NftCommitError)) throw err;
    return err.refusals.map((r) => `${r.errno} op ${r.operationIndex}${r.elementIndex !== undefined ? ` element ${r.elementIndex}` : ''}: ${r.reason ?? ''}`);
  }
}

/** Every object's handle, in dump order: the fake allocates them as the kernel does. */
function handlesOf(rs: Ruleset): string {
  return [rs.tables, rs.chains, rs.sets, rs.rules].map((list) => list.map((o) => o.handle).join(',')).join(' | ');
}

/** A connection's rule handles by comment. */
async function handles(conn: NftConnection): Promise<(comment: string) => number> {
  const rules = (await conn.dump({ table: 'eq' })).rules;
  return (comment) => {
    const r = rules.find((x) => x.comment === comment);
    if (r?.handle === undefined) throw new Error(`no rule "${comment}"`);
    return r.handle;
  };
}

describe('FakeNftables behaves as the kernel', () => {
  let ns: Netns;
  let kernel: Nftables;
  const fake = new FakeNftables();
  beforeAll(() => {
    ns = Netns.create();
    kernel = Nftables.open({ netns: ns.name });
  });
  afterAll(() => {
    kernel?.close();
    ns?.remove();
  });

  it('step by step: outcome, generation, handles and ruleset', async () => {
    for (const step of steps) {
      const gens = [await kernel.generation(), await fake.generation()];
      const kernelOutcome = await outcome(kernel, step.tx(await handles(kernel)));
      const fakeOutcome = await outcome(fake, step.tx(await handles(fake)));
      expect({ step: step.name, outcome: fakeOutcome }).toEqual({ step: step.name, outcome: kernelOutcome });
      expect({ step: step.name, steps: (await fake.generation()) - gens[1]! }).toEqual({ step: step.name, steps: (await kernel.generation()) - gens[0]! });
      expect({ step: step.name, handles: handlesOf(await fake.dump()) }).toEqual({ step: step.name, handles: handlesOf(await kernel.dump()) });
      expect({ step: step.name, ruleset: fake.render() }).toEqual({ step: step.name, ruleset: renderRuleset(await kernel.dump()) });
    }
  });

  it('check: the same verdict, nothing applied, the generation stays', async () => {
    const good = () => new Transaction().add({ table }).add({ chain: chain('checked') });
    const bad = () => new Transaction().add({ table }).delete({ chain: chain('missing') });
    for (const conn of [kernel, fake] as NftConnection[]) {
      const before = await conn.generation();
      await conn.check(good());
      const err = await conn.check(bad()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NftCommitError);
      expect((err as NftCommitError).refusals.map((r) => [r.errno, r.operationIndex, r.reason])).toEqual([[2, 1, 'chain missing does not exist in table ip eq']]);
      expect(await conn.generation()).toBe(before);
    }
    expect(fake.render()).toBe(renderRuleset(await kernel.dump()));
  });

  it("a transaction of the kernel's connection commits on the fake as well", async () => {
    // Elements from a generator are encoded as they are read (a stream), not kept.
    function* streamed(): Generator<{ key: string[] }> {
      for (let i = 0; i < 3; i++) yield { key: [`198.18.3.${i}`] };
    }
    const tx = kernel
      .transaction()
      .add({ table })
      .add({ chain: chain('bound') })
      .add({ set: addrs })
      .add({ set: addrs, elements: [{ key: ['198.18.0.5'] }] })
      .add({ set: { ...addrs, name: 'streamed' } })
      .add({ set: { ...addrs, name: 'streamed' }, elements: streamed() });
    await fake.commit(tx);
    await kernel.commit(tx);
    expect(fake.render()).toBe(renderRuleset(await kernel.dump()));
  });

  it("a missing set's element dump: the same error", async () => {
    const missing = { ...addrs, name: 'nothere' };
    const errors = await Promise.all([kernel, fake].map((conn) => conn.dumpSetElements(missing).catch((e: unknown) => e)));
    expect(errors[1]).toEqual(errors[0]);
  });

  it('a stale generation: NftGenerationError, nothing applied (an empty transaction sends nothing: no error)', async () => {
    for (const conn of [kernel, fake] as NftConnection[]) {
      const generation = await conn.generation();
      await conn.commit(new Transaction(), { generation: generation - 1 });
      await conn.commit(new Transaction().add({ table }).add({ chain: chain('moved') }));
      const err = await conn.commit(new Transaction().add({ chain: chain('stale') }), { generation }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NftGenerationError);
      expect((err as NftGenerationError).refusals.map((r) => [r.errno, r.operationIndex])).toEqual([[85, -1]]);
      expect(await conn.generation()).toBe(generation + 1);
    }
    expect(fake.render()).toBe(renderRuleset(await kernel.dump()));
  });
});
