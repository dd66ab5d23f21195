// FakeNftables without root: each semantic it models, as the kernel shows it in
// fake.kernel.test.ts (same errnos, operation and element indices, reasons and handles).

import { describe, expect, it } from 'vitest';
import { NftCommitError, NftGenerationError, rule, ip, tcp, Transaction, types } from '../../src/index.js';
import type { Chain, LookupExpr, NftSet, Rule, SetElement, Table } from '../../src/index.js';
import { FakeNftables } from '../../src/testing/index.js';

const { ipv4_addr, inet_service } = types;
const table: Table = { family: 'ip', name: 't' };
const chain = (name: string, base?: Chain['base']): Chain => (base ? { family: 'ip', table: 't', name, base } : { family: 'ip', table: 't', name });
const input = chain('input', { type: 'filter', hook: 'input', priority: 0 });
const addrs: NftSet = { family: 'ip', table: 't', name: 'addrs', key: [ipv4_addr] };
const ports: NftSet = { family: 'ip', table: 't', name: 'ports', key: [ipv4_addr], data: [inet_service] };
const jumps: NftSet = { family: 'ip', table: 't', name: 'jumps', key: [ipv4_addr], data: 'verdict' };
const inInput = (b: ReturnType<typeof rule>, comment?: string): Rule => b.rule('t', 'input', comment);

/** A fake with the table, chains input (base), a and b, and the sets addrs, ports and jumps. */
async function fakeWithObjects(): Promise<FakeNftables> {
  const fake = new FakeNftables();
  await fake.commit(
    new Transaction().add({ table }).add({ chain: input }).add({ chain: chain('a') }).add({ chain: chain('b') }).add({ set: addrs }).add({ set: ports }).add({ set: jumps }),
  );
  return fake;
}

/** Commits `tx`, which must be refused, and checks that the fake is exactly as it was. */
async function refused(fake: FakeNftables, tx: Transaction): Promise<NftCommitError> {
  const text = fake.render();
  const generation = await fake.generation();
  const err = await fake.commit(tx).then(
    () => {
      throw new Error('the commit should have been refused');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NftCommitError);
  expect(fake.render()).toBe(text);
  expect(await fake.generation()).toBe(generation);
  return err as NftCommitError;
}

describe('commits', () => {
  it('are atomic: one refusal leaves everything as it was, and every refusal of the batch is reported', async () => {
    const fake = await fakeWithObjects();
    const tx = new Transaction()
      .add({ chain: chain('c') })
      .add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] })
      .delete({ chain: chain('missing') })
      .add({ rule: rule('ip').jump('nowhere').rule('t', 'c') });
    const err = await refused(fake, tx);
    expect(err.refusals.map((r) => [r.errno, r.operationIndex])).toEqual([
      [2, 2],
      [2, 3],
    ]);
    expect(err.message).toBe('nftlink: kernel refused operation 2 (delete chain ip t missing): chain missing does not exist in table ip t (ENOENT) (and 1 more error(s))');
  });

  it('move the generation by one each, unless they change nothing', async () => {
    const fake = new FakeNftables({ generation: 100 });
    expect(await fake.generation()).toBe(100);
    await fake.commit(new Transaction().add({ table }).add({ chain: chain('a') }));
    expect(await fake.generation()).toBe(101);
    // An empty batch, and one of no-ops, commit nothing (the kernel's commit list is empty).
    await fake.commit(new Transaction());
    await fake.commit(new Transaction().add({ table }).destroy({ chain: chain('missing') }));
    expect(await fake.generation()).toBe(101);
    // An add of an existing chain or set is an update the kernel records.
    await fake.commit(new Transaction().add({ chain: chain('a') }));
    expect(await fake.generation()).toBe(102);
  });

  it('refuse a stale generation with NftGenerationError', async () => {
    const fake = await fakeWithObjects();
    const generation = await fake.generation();
    await fake.commit(new Transaction().add({ chain: chain('c') }), { generation });
    const err = await fake.commit(new Transaction().add({ chain: chain('d') }), { generation }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NftGenerationError);
    expect((err as NftGenerationError).errno).toBe(85);
    expect((err as NftGenerationError).expectedGeneration).toBe(generation);
    expect(fake.render()).not.toContain('chain d');
    // An empty transaction sends nothing, so nothing compares its generation.
    await fake.commit(new Transaction(), { generation });
  });

  it('echo the handles of new rules, allocated per table in order; a replaced rule keeps its own', async () => {
    const fake = await fakeWithObjects();
    // The table's chains and sets took handles 1 to 6.
    const { ruleHandles, missingHandles } = await fake.commit(
      new Transaction()
        .add({ rule: inInput(rule('ip').match(tcp.dport, 80).accept()) }, { echo: true })
        .add({ rule: inInput(rule('ip').match(tcp.dport, 81).accept()) })
        .add({ rule: inInput(rule('ip').match(tcp.dport, 82).accept()) }, { echo: true }),
    );
    expect([...ruleHandles]).toEqual([
      [0, 7],
      [2, 9],
    ]);
    expect(missingHandles).toEqual([]);
    const replaced = await fake.commit(new Transaction().replace({ rule: { ...inInput(rule('ip').drop()), handle: 8 } }, { echo: true }));
    expect([...replaced.ruleHandles]).toEqual([[0, 8]]);
    const other = new FakeNftables();
    await other.commit(new Transaction().add({ table: { family: 'ip', name: 'u' } }).add({ chain: { family: 'ip', table: 'u', name: 'c' } }));
    const first = await other.commit(new Transaction().add({ rule: rule('ip').accept().rule('u', 'c') }, { echo: true }));
    expect([...first.ruleHandles]).toEqual([[0, 2]]);
  });

  it('keep the handles a refused batch took used, as the kernel does', async () => {
    const fake = await fakeWithObjects();
    await refused(fake, new Transaction().add({ rule: inInput(rule('ip').jump('missing')) }));
    const { ruleHandles } = await fake.commit(new Transaction().add({ rule: inInput(rule('ip').accept()) }, { echo: true }));
    expect([...ruleHandles]).toEqual([[0, 8]]);
  });

  it('check validates without applying', async () => {
    const fake = await fakeWithObjects();
    const text = fake.render();
    await fake.check(new Transaction().add({ chain: chain('c') }));
    await expect(fake.check(new Transaction().delete({ chain: chain('missing') }))).rejects.toBeInstanceOf(NftCommitError);
    expect(fake.render()).toBe(text);
  });
});

describe('tables, chains and sets', () => {
  it('add of an existing object is no error; create is EEXIST', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ table }).add({ chain: chain('a') }).add({ chain: input }).add({ set: addrs }));
    for (const obj of [{ table }, { chain: chain('a') }, { set: addrs }]) {
      const err = await refused(fake, new Transaction().create(obj));
      expect(err.code).toBe('EEXIST');
    }
  });

  it('add of a set that differs in key, data or flags: EEXIST', async () => {
    const fake = await fakeWithObjects();
    for (const set of [{ ...addrs, key: [inet_service] }, { ...ports, data: [ipv4_addr] }, { ...addrs, flags: ['timeout' as const] }]) {
      expect((await refused(fake, new Transaction().add({ set }))).code).toBe('EEXIST');
    }
  });

  it('add of a base chain: another hook or priority EOPNOTSUPP, another type or a regular chain EEXIST, a policy changes', async () => {
    const fake = await fakeWithObjects();
    const base = (b: Partial<NonNullable<Chain['base']>>, name = 'input'): Chain => chain(name, { type: 'filter', hook: 'input', priority: 0, ...b });
    expect((await refused(fake, new Transaction().add({ chain: base({ priority: 10 }) }))).code).toBe('EOPNOTSUPP');
    expect((await refused(fake, new Transaction().add({ chain: base({ hook: 'output' }) }))).code).toBe('EOPNOTSUPP');
    expect((await refused(fake, new Transaction().add({ chain: base({ type: 'nat' }) }))).code).toBe('EEXIST');
    expect((await refused(fake, new Transaction().add({ chain: base({}, 'a') }))).code).toBe('EEXIST');
    await fake.commit(new Transaction().add({ chain: base({ policy: 'drop' }) }));
    expect(fake.render()).toContain('type filter hook input priority 0; policy drop;');
  });

  it('delete of a missing object: ENOENT naming it; destroy: nothing', async () => {
    const fake = await fakeWithObjects();
    const cases: [Transaction, string | undefined][] = [
      [new Transaction().delete({ table: { family: 'ip', name: 'x' } }), 'table ip x does not exist'],
      [new Transaction().delete({ chain: chain('x') }), 'chain x does not exist in table ip t'],
      [new Transaction().delete({ set: { ...addrs, name: 'x' } }), 'set x does not exist in table ip t'],
      [new Transaction().destroy({ chain: { family: 'ip', table: 'x', name: 'c' } }), 'table ip x does not exist'],
      // The kernel points at the rule message's chain, which a chain's operation does not explain.
      [new Transaction().flush({ chain: chain('x') }), undefined],
    ];
    for (const [tx, reason] of cases) {
      const err = await refused(fake, tx);
      expect([err.code, err.reason]).toEqual(['ENOENT', reason]);
    }
    await fake.commit(new Transaction().destroy({ table: { family: 'ip', name: 'x' } }).destroy({ chain: chain('x') }).destroy({ set: { ...addrs, name: 'x' } }));
  });

  it('delete of a chain something jumps to, or of a set a rule uses: EBUSY; a chain goes with its own rules', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ rule: inInput(rule('ip').jump('a')) }).add({ rule: inInput(rule('ip').inSet(ip.saddr, 'addrs').accept()) }));
    const chainBusy = await refused(fake, new Transaction().delete({ chain: chain('a') }));
    expect([chainBusy.code, chainBusy.inUse]).toEqual(['EBUSY', { kind: 'chain', family: 'ip', table: 't', name: 'a' }]);
    const setBusy = await refused(fake, new Transaction().delete({ set: addrs }));
    expect([setBusy.code, setBusy.reason]).toEqual(['EBUSY', 'set addrs is in use: a rule refers to it']);
    await fake.commit(new Transaction().add({ set: jumps, elements: [{ key: ['198.18.0.1'], value: { kind: 'goto', chain: 'b' } }] }));
    expect((await refused(fake, new Transaction().delete({ chain: chain('b') }))).code).toBe('EBUSY');
    await fake.commit(new Transaction().add({ chain: chain('c') }).add({ rule: rule('ip').accept().rule('t', 'c') }));
    await fake.commit(new Transaction().delete({ chain: chain('c') }));
    expect(fake.render()).not.toContain('chain c');
  });

  it('flush: a chain of its rules, a table of its chains\' rules (sets keep their elements), a set of its elements', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(
      new Transaction()
        .add({ rule: inInput(rule('ip').accept()) })
        .add({ rule: rule('ip').drop().rule('t', 'a') })
        .add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] }),
    );
    await fake.commit(new Transaction().flush({ chain: input }));
    expect((await fake.dump()).rules.map((r) => r.chain)).toEqual(['a']);
    await fake.commit(new Transaction().flush({ table }));
    const dumped = await fake.dump();
    expect(dumped.rules).toEqual([]);
    expect(dumped.sets.find((s) => s.name === 'addrs')?.elements).toHaveLength(1);
    await fake.commit(new Transaction().flush({ set: addrs }));
    expect((await fake.dumpSetElements(addrs)).elements).toEqual([]);
  });

  it('delete of a table takes everything in it', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ rule: inInput(rule('ip').jump('a')) }).delete({ table }));
    expect(fake.render()).toBe('');
  });
});

describe('rules', () => {
  it('that name a missing table, chain, set or jump target: ENOENT naming it', async () => {
    const fake = await fakeWithObjects();
    const cases: [Rule, string][] = [
      [rule('ip').accept().rule('x', 'c'), 'table ip x does not exist'],
      [rule('ip').accept().rule('t', 'x'), 'chain x does not exist in table ip t'],
      [inInput(rule('ip').inSet(ip.saddr, 'x').accept()), 'set x (of expression 1, lookup) does not exist in table ip t'],
      [inInput(rule('ip').match(tcp.dport, 80).jump('x')), 'chain x (the jump target of expression 4) does not exist in table ip t'],
    ];
    for (const [r, reason] of cases) {
      const err = await refused(fake, new Transaction().add({ rule: r }));
      expect([err.code, err.reason]).toEqual(['ENOENT', reason]);
    }
  });

  it('a jump to a base chain: EOPNOTSUPP', async () => {
    const fake = await fakeWithObjects();
    expect((await refused(fake, new Transaction().add({ rule: rule('ip').jump('input').rule('t', 'a') }))).code).toBe('EOPNOTSUPP');
  });

  it('go where add, insert, replace and delete put them, by handle', async () => {
    const fake = await fakeWithObjects();
    const port = (p: number, comment: string): Rule => inInput(rule('ip').match(tcp.dport, p).accept(), comment);
    await fake.commit(new Transaction().add({ rule: port(1, 'one') }).add({ rule: port(2, 'two') }));
    const handle = async (comment: string): Promise<number> => (await fake.dump()).rules.find((r) => r.comment === comment)!.handle!;
    await fake.commit(
      new Transaction()
        .insert({ rule: port(0, 'zero') })
        .add({ rule: { ...port(15, 'after-one'), position: await handle('one') } })
        .insert({ rule: { ...port(18, 'before-two'), position: await handle('two') } }),
    );
    await fake.commit(new Transaction().replace({ rule: { ...port(22, 'two-replaced'), handle: await handle('two') } }));
    await fake.commit(new Transaction().delete({ rule: { ...port(0, ''), handle: await handle('zero') } }));
    expect((await fake.dump()).rules.map((r) => r.comment)).toEqual(['one', 'after-one', 'before-two', 'two-replaced']);
    for (const tx of [
      new Transaction().delete({ rule: { ...port(0, ''), handle: 999 } }),
      new Transaction().replace({ rule: { ...port(0, ''), handle: 999 } }),
      new Transaction().add({ rule: { ...port(0, ''), position: 999 } }),
    ]) {
      expect((await refused(fake, tx)).missing).toMatchObject({ kind: 'rule', name: 'input' });
    }
    await fake.commit(new Transaction().destroy({ rule: { ...port(0, ''), handle: 999 } }));
  });

  it('keep their inline sets, named and with elements, inside their lookups', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(
      new Transaction()
        .add({ rule: inInput(rule('ip').lookupElements([ip.saddr], [{ key: ['198.18.1.1'] }, { key: ['198.18.1.2'] }]).accept()) })
        .add({ rule: inInput(rule('ip').vmap(ip.saddr, [{ key: ['198.18.1.3'], value: { kind: 'jump', chain: 'a' } }])) }),
    );
    const dumped = await fake.dump();
    expect(dumped.sets.map((s) => s.name)).toEqual(['addrs', 'ports', 'jumps']);
    const inline = (dumped.rules[0]!.exprs.find((e) => e.type === 'lookup') as LookupExpr).inline!;
    expect(inline).toMatchObject({ anonymous: true, family: 'ip', table: 't', elements: [{ key: ['198.18.1.1'] }, { key: ['198.18.1.2'] }] });
    expect(fake.render()).toContain('ip saddr { 198.18.1.1, 198.18.1.2 } accept');
    // The inline map's jump holds chain a.
    expect((await refused(fake, new Transaction().delete({ chain: chain('a') }))).code).toBe('EBUSY');
    const bad = await refused(fake, new Transaction().add({ rule: inInput(rule('ip').vmap(ip.saddr, [{ key: ['198.18.1.4'], value: { kind: 'jump', chain: 'x' } }])) }));
    expect([bad.code, bad.elementIndex, bad.reason]).toEqual(['ENOENT', 0, "chain x (the jump target of element 0 of expression 1's inline map) does not exist in table ip t"]);
  });
});

describe('elements', () => {
  it('add of an existing key: nothing with the same data, EEXIST with other data; create: EEXIST', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.1'], value: [80] }] }));
    const generation = await fake.generation();
    await fake.commit(new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.1'], value: [80] }] }));
    expect(await fake.generation()).toBe(generation);
    const other = await refused(fake, new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.2'], value: [1] }, { key: ['198.18.0.1'], value: [81] }] }));
    expect([other.code, other.elementIndex, other.conflict]).toEqual(['EEXIST', 1, { kind: 'element', family: 'ip', table: 't', name: 'ports' }]);
    expect((await refused(fake, new Transaction().create({ set: ports, elements: [{ key: ['198.18.0.1'], value: [80] }] }))).code).toBe('EEXIST');
  });

  it('delete of a missing key: ENOENT at that element; destroy: nothing', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] }));
    const err = await refused(fake, new Transaction().delete({ set: addrs, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.9'] }] }));
    expect([err.code, err.elementIndex, err.command, err.reason]).toEqual(['ENOENT', 1, 'delete element ip t addrs { 198.18.0.9 }', 'the element is not in set addrs']);
    await fake.commit(new Transaction().destroy({ set: addrs, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.9'] }] }));
    expect((await fake.dumpSetElements(addrs)).elements).toEqual([]);
  });

  it('past a set\'s size: ENFILE, naming the set and its size', async () => {
    const fake = await fakeWithObjects();
    const small: NftSet = { ...addrs, name: 'small', size: 2 };
    await fake.commit(new Transaction().add({ set: small }).add({ set: small, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }] }));
    const err = await refused(fake, new Transaction().add({ set: small, elements: [{ key: ['198.18.0.2'] }, { key: ['198.18.0.3'] }] }));
    expect([err.code, err.elementIndex, err.full]).toEqual(['ENFILE', 1, { kind: 'set', family: 'ip', table: 't', name: 'small', size: 2 }]);
  });

  it('in a missing table or set, or jumping to a missing chain: ENOENT', async () => {
    const fake = await fakeWithObjects();
    expect((await refused(fake, new Transaction().add({ set: { ...addrs, name: 'x' }, elements: [{ key: ['198.18.0.1'] }] }))).reason).toBe('set x does not exist in table ip t');
    expect((await refused(fake, new Transaction().add({ set: { ...addrs, table: 'x' }, elements: [{ key: ['198.18.0.1'] }] }))).reason).toBe('table ip x does not exist');
    const jump = await refused(fake, new Transaction().add({ set: jumps, elements: [{ key: ['198.18.0.1'], value: { kind: 'jump', chain: 'x' } }] }));
    expect(jump.reason).toBe("chain x (the element's jump target) does not exist in table ip t");
  });

  it('of an interval set: a range that overlaps another EEXIST, the same range nothing', async () => {
    const fake = await fakeWithObjects();
    const ranges: NftSet = { ...addrs, name: 'ranges', flags: ['interval'] };
    await fake.commit(new Transaction().add({ set: ranges }).add({ set: ranges, elements: [{ key: ['198.18.4.0/24'] }, { key: ['198.18.6.1-198.18.6.9'] }] }));
    for (const key of ['198.18.4.128/25', '198.18.6.5', '198.18.6.8-198.18.6.20']) {
      const err = await refused(fake, new Transaction().add({ set: ranges, elements: [{ key: [key] }] }));
      expect([err.code, err.elementIndex]).toEqual(['EEXIST', 0]);
    }
    await fake.commit(new Transaction().add({ set: ranges, elements: [{ key: ['198.18.4.0/24'] }, { key: ['198.18.6.12-198.18.6.20'] }] }));
    expect(fake.render()).toContain('elements = { 198.18.4.0/24, 198.18.6.1-198.18.6.9, 198.18.6.12-198.18.6.20 }');
  });

  it('none: nothing queued, so nothing sent (the kernel would flush or refuse): the set keeps its elements', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] }));
    const text = fake.render();
    const generation = await fake.generation();
    for (const verb of ['add', 'create', 'delete', 'destroy'] as const) {
      await fake.commit(new Transaction()[verb]({ set: addrs, elements: [] }));
      await fake.check(new Transaction()[verb]({ set: addrs, elements: [] }));
    }
    expect((await fake.dumpSetElements(addrs)).elements).toEqual([{ key: ['198.18.0.1'] }]);
    expect(fake.render()).toBe(text);
    expect(await fake.generation()).toBe(generation);
  });

  it("encoded with a set object other than the fake's: EINVAL at that element", async () => {
    const fake = await fakeWithObjects();
    const cases: Transaction[] = [
      new Transaction().add({ set: { ...ports, data: undefined }, elements: [{ key: ['198.18.0.5'] }] }),
      new Transaction().add({ set: { ...addrs, data: [inet_service] }, elements: [{ key: ['198.18.0.5'], value: [1] }] }),
      new Transaction().add({ set: { ...ports, data: 'verdict' }, elements: [{ key: ['198.18.0.5'], value: { kind: 'accept' } }] }),
    ];
    for (const tx of cases) {
      const err = await refused(fake, tx);
      expect([err.code, err.elementIndex, err.reason]).toEqual(['EINVAL', 0, expect.stringContaining('compare the set\'s declared types and flags')]);
    }
  });

  it('given with an existing set: ENOENT (they name the set by the id of a set the batch did not create)', async () => {
    const fake = await fakeWithObjects();
    expect((await refused(fake, new Transaction().add({ set: { ...addrs, elements: [{ key: ['198.18.0.1'] }] } }))).code).toBe('ENOENT');
    await fake.commit(new Transaction().add({ set: { ...addrs, name: 'fresh', elements: [{ key: ['198.18.0.1'] }] } }));
    expect(fake.render()).toContain('elements = { 198.18.0.1 }');
  });
});

describe('dumps', () => {
  it('filter by family, table and chain, leave elements out, and give element keys', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(
      new Transaction()
        .add({ table: { family: 'ip6', name: 't' } })
        .add({ rule: rule('ip').accept().rule('t', 'a') })
        .add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] }),
    );
    expect((await fake.dump({ family: 'ip6' })).tables).toEqual([{ family: 'ip6', name: 't', handle: 2 }]);
    expect((await fake.dump({ table: 'x' })).tables).toEqual([]);
    const chainOnly = await fake.dump({ table: 't', family: 'ip', chain: 'a' });
    expect([chainOnly.tables, chainOnly.chains, chainOnly.sets, chainOnly.rules.length]).toEqual([[], [], [], 1]);
    expect((await fake.dump({ elements: false })).sets.every((s) => s.elements === undefined)).toBe(true);
    const keyed = (await fake.dump({ elementKeys: true })).sets.find((s) => s.name === 'addrs')!;
    expect(keyed.elementKeys).toHaveLength(1);
    expect(keyed.elementKeys![0]).toBe(String.fromCharCode(198, 18, 0, 1));
  });

  it('decode values as a kernel dump does, and are copies', async () => {
    const fake = await fakeWithObjects();
    await fake.commit(new Transaction().add({ set: ports, elements: [{ key: ['198.18.0.1'], value: [80] }] }));
    const dumped = await fake.dump();
    const map = dumped.sets.find((s) => s.name === 'ports')!;
    expect(map.elements).toEqual([{ key: ['198.18.0.1'], value: [80] }]);
    expect(map.key).toEqual([ipv4_addr]);
    (map.elements as SetElement[]).push({ key: ['198.18.0.2'], value: [1] });
    dumped.rules.push(inInput(rule('ip').accept()));
    expect((await fake.dumpSetElements(ports)).elements).toHaveLength(1);
    expect((await fake.dump()).rules).toEqual([]);
    await expect(fake.dumpSetElements({ ...ports, name: 'x' })).rejects.toThrow('nftlink: the kernel refused the set element dump: No such file or directory (errno 2)');
  });
});

describe('refuse', () => {
  it('fails the next committed operation that matches as the kernel would report its errno, once', async () => {
    const fake = await fakeWithObjects();
    const small: NftSet = { ...addrs, size: 10 };
    fake.refuse((op) => op.kind === 'element' && op.set.name === 'addrs', 'ENFILE', { elementIndex: 1 });
    const tx = () => new Transaction().add({ chain: chain('c') }).add({ set: small, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }] });
    // A check meets the refusal too, and leaves it for the commit.
    await expect(fake.check(tx())).rejects.toMatchObject({ errno: 23 });
    const err = await refused(fake, tx());
    expect([err.operationIndex, err.elementIndex, err.errno, err.full]).toEqual([1, 1, 23, { kind: 'set', family: 'ip', table: 't', name: 'addrs', size: 10 }]);
    await fake.commit(tx());
    expect(fake.render()).toContain('chain c');
  });
});

it('a closed connection refuses to work', async () => {
  const fake = new FakeNftables();
  fake.close();
  await expect(fake.generation()).rejects.toThrow(/closed/);
});
