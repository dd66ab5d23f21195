// A transaction with one bad operation fails as a whole: the error names that operation (and the
// element) and the errno, and a dump afterwards shows the kernel exactly as it was.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NftCommitError, NftGenerationError, NftValidationError, Nftables, renderRuleset, rule, ip, tcp, Transaction, types } from '../../src/index.js';
import type { MissingObject, NftSet } from '../../src/index.js';
import { Netns } from '../helpers/netns.js';

const { ipv4_addr, inet_service } = types;
let ns: Netns;
let nft: Nftables;
const set: NftSet = { family: 'ip', table: 'err', name: 'addrs', key: [ipv4_addr] };
/** The i-th address of 198.18.0.0/16: the elements of the large lists below. */
const addr = (i: number): string => `198.18.${(i >> 8) & 255}.${i & 255}`;
/** Elements addr(from) .. addr(from + n - 1), made as they are read. */
function* addrs(n: number, from = 0): Generator<{ key: string[] }> {
  for (let i = from; i < from + n; i++) yield { key: [addr(i)] };
}
/** addrs(n), but element `at` is `missing`, an address the set does not hold. */
function* addrsWithMissing(n: number, at: number, missing: string): Generator<{ key: string[] }> {
  for (let i = 0; i < n; i++) yield { key: [i === at ? missing : addr(i)] };
}

beforeAll(async () => {
  ns = Netns.create();
  nft = Nftables.open({ netns: ns.name });
  const tx = new Transaction()
    .add({ table: { family: 'ip', name: 'err' } })
    .add({ chain: { family: 'ip', table: 'err', name: 'c' } })
    .add({ set })
    .add({ set, elements: [{ key: ['198.18.0.1'] }] });
  await nft.commit(tx);
});
afterAll(() => {
  nft?.close();
  ns?.remove();
});

async function expectUnchanged(run: () => Promise<unknown>): Promise<NftCommitError> {
  const before = renderRuleset(await nft.dump());
  const genBefore = await nft.generation();
  const err = await run().then(
    () => {
      throw new Error('the commit should have failed');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NftCommitError);
  expect(renderRuleset(await nft.dump())).toBe(before);
  expect(await nft.generation()).toBe(genBefore);
  return err as NftCommitError;
}

/** The refusal of a delete (operation 1) whose element `index`, `missing`, is not in the set. */
function expectMissingElement(err: NftCommitError, index: number, missing: string): void {
  expect(err.code).toBe('ENOENT');
  expect(err.operationIndex).toBe(1);
  expect(err.elementIndex).toBe(index);
  expect(err.command).toBe(`delete element ip err addrs { ${missing} }`);
}

function goodOps(tx: Transaction, n: number, prefix: string): Transaction {
  for (let i = 0; i < n; i++) tx.add({ chain: { family: 'ip', table: 'err', name: `${prefix}${i}` } });
  return tx;
}

describe('one bad operation in the middle', () => {
  it('a jump to a missing chain: ENOENT, names the rule', async () => {
    const tx = goodOps(new Transaction(), 5, 'a');
    tx.add({ rule: rule('ip').match(tcp.dport, 80).jump('missing').rule('err', 'c') });
    goodOps(tx, 5, 'b');
    const err = await expectUnchanged(() => nft.commit(tx));
    expect(err.errno).toBe(2);
    expect(err.code).toBe('ENOENT');
    expect(err.operationIndex).toBe(5);
    expect(err.command).toBe('add rule ip err c tcp dport 80 jump missing');
    expect(err.message).toBe(
      'nftlink: kernel refused operation 5 (add rule ip err c tcp dport 80 jump missing): chain missing (the jump target of expression 4) does not exist in table ip err (ENOENT)',
    );
  });

  it('ENOENT names what is missing, from the attribute the kernel pointed at', async () => {
    const vmap: NftSet = { family: 'ip', table: 'err', name: 'dispatch', key: [ipv4_addr], data: 'verdict' };
    await nft.commit(new Transaction().add({ set: vmap }));
    const refusalOf = async (tx: Transaction) => {
      const err = await expectUnchanged(() => nft.commit(tx));
      return { reason: err.reason, missing: err.missing };
    };
    // What is missing, as text and as an object a caller can act on.
    const table = (name: string): MissingObject => ({ kind: 'table', family: 'ip', table: name });
    const inErr = (kind: MissingObject['kind'], name: string, handle?: number): MissingObject =>
      handle === undefined ? { kind, family: 'ip', table: 'err', name } : { kind, family: 'ip', table: 'err', name, handle };
    const cases: [Transaction, string, MissingObject][] = [
      [new Transaction().add({ rule: rule('ip').accept().rule('err', 'nochain') }), 'chain nochain does not exist in table ip err', inErr('chain', 'nochain')],
      [new Transaction().add({ rule: rule('ip').accept().rule('notable', 'c') }), 'table ip notable does not exist', table('notable')],
      [
        new Transaction().add({ rule: rule('ip').inSet(ip.saddr, 'noset').accept().rule('err', 'c') }),
        'set noset (of expression 1, lookup) does not exist in table ip err',
        inErr('set', 'noset'),
      ],
      [new Transaction().delete({ rule: { ...rule('ip').accept().rule('err', 'c'), handle: 9999 } }), 'chain c has no rule with handle 9999', inErr('rule', 'c', 9999)],
      [
        new Transaction().insert({ rule: { ...rule('ip').accept().rule('err', 'c'), position: 9998 } }),
        'chain c has no rule with handle 9998 (the position)',
        inErr('rule', 'c', 9998),
      ],
      [new Transaction().add({ set: { ...set, name: 'noset' }, elements: [{ key: ['198.18.0.1'] }] }), 'set noset does not exist in table ip err', inErr('set', 'noset')],
      [new Transaction().delete({ set, elements: [{ key: ['198.19.0.9'] }] }), 'the element is not in set addrs', inErr('element', 'addrs')],
      [
        new Transaction().add({ set: vmap, elements: [{ key: ['198.18.0.1'], value: { kind: 'accept' } }, { key: ['198.18.0.2'], value: { kind: 'goto', chain: 'nochain' } }] }),
        "chain nochain (the element's goto target) does not exist in table ip err",
        inErr('chain', 'nochain'),
      ],
      [new Transaction().delete({ chain: { family: 'ip', table: 'err', name: 'nochain' } }), 'chain nochain does not exist in table ip err', inErr('chain', 'nochain')],
      [new Transaction().delete({ set: { ...set, name: 'noset' } }), 'set noset does not exist in table ip err', inErr('set', 'noset')],
      [new Transaction().delete({ table: { family: 'ip', name: 'notable' } }), 'table ip notable does not exist', table('notable')],
      [new Transaction().add({ chain: { family: 'ip', table: 'notable', name: 'x' } }), 'table ip notable does not exist', table('notable')],
    ];
    for (const [tx, reason, missing] of cases) expect(await refusalOf(tx)).toEqual({ reason, missing });
  });

  it("a rule's inline map refused for a missing jump target: named from the inline map's element, not read as the rule's attributes", async () => {
    // The rule's operation also sends its anonymous map and that map's elements; the kernel refuses
    // the element message, whose attribute numbers mean other things than a rule's.
    const vmap = rule('ip').vmap(ip.saddr, [
      { key: ['198.18.0.1'], value: { kind: 'accept' } },
      { key: ['198.18.0.2'], value: { kind: 'goto', chain: 'nowhere' } },
    ]);
    const tx = new Transaction().add({ rule: vmap.rule('err', 'c') });
    const err = await expectUnchanged(() => nft.commit(tx));
    expect(err.code).toBe('ENOENT');
    expect(err.operationIndex).toBe(0);
    expect(err.elementIndex).toBe(1);
    expect(err.reason).toBe("chain nowhere (the goto target of element 1 of expression 1's inline map) does not exist in table ip err");
    expect(err.missing).toEqual({ kind: 'chain', family: 'ip', table: 'err', name: 'nowhere' });
    // In a table that does not exist, the inline map is what the kernel refuses first.
    const elsewhere = await expectUnchanged(() => nft.commit(new Transaction().add({ rule: vmap.rule('notable', 'c') })));
    expect(elsewhere.reason).toBe('table ip notable does not exist');
  });

  it('a duplicate create: EEXIST', async () => {
    const tx = goodOps(new Transaction(), 3, 'd');
    tx.create({ chain: { family: 'ip', table: 'err', name: 'c' } });
    goodOps(tx, 3, 'e');
    const err = await expectUnchanged(() => nft.commit(tx));
    expect(err.code).toBe('EEXIST');
    expect(err.operationIndex).toBe(3);
    expect(err.command).toBe('create chain ip err c');
  });

  it('an element of the wrong length: EINVAL, with the element index', async () => {
    // A set whose declared type the caller got wrong: 2-byte keys into a 4-byte set.
    const wrong: NftSet = { ...set, key: [inet_service] };
    const tx = goodOps(new Transaction(), 2, 'f');
    tx.add({ set, elements: [{ key: ['198.18.0.2'] }] });
    tx.add({ set: wrong, elements: [{ key: [1] }, { key: [2] }, { key: [3] }] });
    const err = await expectUnchanged(() => nft.commit(tx));
    expect(err.code).toBe('EINVAL');
    expect(err.operationIndex).toBe(3);
    expect(err.elementIndex).toBe(0);
    expect(err.reason).toMatch(/^the element does not fit set addrs as the kernel has it \(a key or value of another length/);
  });

  it("an element past a set's declared size: ENFILE, with its element index (a size is a cap, not only a hint)", async () => {
    const sized: NftSet = { ...set, name: 'sized', size: 4 };
    const tx = new Transaction().add({ set: sized }).add({ set: sized, elements: Array.from({ length: 6 }, (_, i) => ({ key: [addr(i)] })) });
    const err = await expectUnchanged(() => nft.commit(tx));
    expect(err.code).toBe('ENFILE');
    expect(err.operationIndex).toBe(1);
    expect(err.elementIndex).toBe(4);
    expect(err.command).toBe('add element ip err sized { 198.18.0.4 }');
    // Not strerror's "Too many open files in system": what ENFILE means for a set.
    expect(err.reason).toBe('set sized is full: it holds its declared size of 4 element(s)');
    expect(err.message).toBe('nftlink: kernel refused operation 1 (add element ip err sized { 198.18.0.4 }), element 4: set sized is full: it holds its declared size of 4 element(s) (ENFILE)');
    // As data, for a caller that declares the set larger and retries.
    expect(err.full).toEqual({ kind: 'set', family: 'ip', table: 'err', name: 'sized', size: 4 });
    expect([err.missing, err.inUse, err.conflict]).toEqual([undefined, undefined, undefined]);
  });

  it('a loop of jumps: EMLINK (or ELOOP), named and explained, not in strerror\'s words', async () => {
    const tx = new Transaction()
      .add({ chain: { family: 'ip', table: 'err', name: 'base', base: { type: 'filter', hook: 'input', priority: 0, policy: 'accept' } } })
      .add({ chain: { family: 'ip', table: 'err', name: 'loop-a' } })
      .add({ chain: { family: 'ip', table: 'err', name: 'loop-b' } })
      .add({ rule: rule('ip').jump('loop-a').rule('err', 'base') })
      .add({ rule: rule('ip').jump('loop-b').rule('err', 'loop-a') })
      .add({ rule: rule('ip').jump('loop-a').rule('err', 'loop-b') });
    const err = await expectUnchanged(() => nft.commit(tx));
    // EMLINK on 6.18 (the depth walk meets the loop first); ELOOP where the kernel finds the loop
    // itself (see test/native/malformed.kernel.test.ts).
    expect(['EMLINK', 'ELOOP']).toContain(err.code);
    expect(err.operationIndex).toBe(5);
    expect(err.message).toMatch(
      /^nftlink: kernel refused operation 5 \(add rule ip err loop-b jump loop-a\): its jumps (nest chains more than 16 deep, or )?loop back to a chain on the way \((EMLINK|ELOOP)\)$/,
    );
  });

  it('a changed map value, and deleting a set or chain in use: explained, not in strerror\'s words', async () => {
    const map: NftSet = { family: 'ip', table: 'err', name: 'ports', key: [ipv4_addr], data: [inet_service] };
    await nft.commit(
      new Transaction()
        .add({ set: map })
        .add({ set: map, elements: [{ key: ['198.18.0.1'], value: [80] }] })
        .add({ chain: { family: 'ip', table: 'err', name: 'target' } })
        .add({ rule: rule('ip').inSet(ip.saddr, 'addrs').jump('target').rule('err', 'c') }),
    );
    const changed = await expectUnchanged(() => nft.commit(new Transaction().add({ set: map, elements: [{ key: ['198.18.0.1'], value: [81] }] })));
    expect(changed.code).toBe('EEXIST');
    expect(changed.elementIndex).toBe(0);
    expect(changed.reason).toBe('the key is already in map ports with other data (a value is not changed in place: delete the element and add it again, in one transaction)');
    expect(changed.conflict).toEqual({ kind: 'element', family: 'ip', table: 'err', name: 'ports' });
    const setInUse = await expectUnchanged(() => nft.commit(new Transaction().delete({ set })));
    expect(setInUse.code).toBe('EBUSY');
    expect(setInUse.message).toBe('nftlink: kernel refused operation 0 (delete set ip err addrs): set addrs is in use: a rule refers to it (EBUSY)');
    expect(setInUse.inUse).toEqual({ kind: 'set', family: 'ip', table: 'err', name: 'addrs' });
    const chainInUse = await expectUnchanged(() => nft.commit(new Transaction().delete({ chain: { family: 'ip', table: 'err', name: 'target' } })));
    expect(chainInUse.code).toBe('EBUSY');
    expect(chainInUse.reason).toBe('chain target is in use: a rule or a verdict map element jumps or goes to it');
    expect(chainInUse.inUse).toEqual({ kind: 'chain', family: 'ip', table: 'err', name: 'target' });
    expect([changed.full, changed.inUse, setInUse.conflict, chainInUse.missing]).toEqual([undefined, undefined, undefined, undefined]);
    // The same element again is no error at all: `add` is idempotent.
    await nft.commit(new Transaction().add({ set: map, elements: [{ key: ['198.18.0.1'], value: [80] }] }));
  });

  it('a bad element deep inside a large element list is attributed to that element', async () => {
    const elements = Array.from({ length: 5000 }, (_, i) => ({ key: [addr(i)] }));
    const tx = new Transaction().add({ set, elements });
    // Delete one element that does not exist, at position 3777 of a 5000-element delete.
    const del = elements.slice(0, 5000).map((e, i) => (i === 3777 ? { key: ['198.19.255.255'] } : e));
    tx.delete({ set, elements: del });
    expectMissingElement(await expectUnchanged(() => nft.commit(tx)), 3777, '198.19.255.255');
  });

  it('the same with the elements streamed from generators: the refused element is named from the request', async () => {
    const tx = new Transaction().add({ set, elements: addrs(5000) }).delete({ set, elements: addrsWithMissing(5000, 3777, '198.19.255.254') });
    expectMissingElement(await expectUnchanged(() => nft.commit(tx)), 3777, '198.19.255.254');
  });

  it('streamed elements commit as the array would: the dump holds every one', async () => {
    const streamed: NftSet = { ...set, name: 'streamed' };
    await nft.commit(new Transaction().add({ set: streamed }).add({ set: streamed, elements: addrs(20_000) }));
    const { elements } = await nft.dumpSetElements(streamed);
    expect(new Set(elements.map((e) => e.key[0])).size).toBe(20_000);
    expect(elements.map((e) => e.key[0])).toContain('198.18.78.31');
    await nft.commit(new Transaction().delete({ set: streamed }));
  });

  it('10,000 operations with one bad one at a random position: always attributed right', async () => {
    for (let trial = 0; trial < 5; trial++) {
      const bad = Math.floor(Math.random() * 10_000);
      const tx = new Transaction();
      for (let i = 0; i < 10_000; i++) {
        if (i === bad) tx.add({ rule: rule('ip').match(ip.daddr, '198.18.0.9').jump(`nowhere-${trial}`).rule('err', 'c') });
        else tx.add({ set, elements: [{ key: [addr(i)] }] });
      }
      const err = await expectUnchanged(() => nft.commit(tx));
      expect(err.operationIndex).toBe(bad);
      expect(err.code).toBe('ENOENT');
    }
  });
});

describe('check mode and generations', () => {
  it('check() validates without applying, and reports the same errors', async () => {
    const good = new Transaction().add({ chain: { family: 'ip', table: 'err', name: 'checked' } });
    await nft.check(good);
    expect((await nft.dump()).chains.map((c) => c.name)).not.toContain('checked');
    const bad = new Transaction().add({ rule: rule('ip').jump('nope').rule('err', 'c') });
    const err = await expectUnchanged(() => nft.check(bad));
    expect(err.code).toBe('ENOENT');
  });

  it('a stale generation is refused and nothing is applied', async () => {
    const gen = await nft.generation();
    await nft.commit(new Transaction().add({ chain: { family: 'ip', table: 'err', name: 'moved-on' } }));
    const tx = new Transaction().add({ chain: { family: 'ip', table: 'err', name: 'stale' } });
    const err = await expectUnchanged(() => nft.commit(tx, { generation: gen }));
    expect(err).toBeInstanceOf(NftGenerationError);
    await nft.commit(tx, { generation: await nft.generation() });
    expect((await nft.dump()).chains.map((c) => c.name)).toContain('stale');
  });
});

describe('validation when an operation is queued', () => {
  it('names over 255 bytes, comments over 128 bytes, values of the wrong type', () => {
    const tx = new Transaction();
    expect(() => tx.add({ chain: { family: 'ip', table: 'err', name: 'x'.repeat(256) } })).toThrow(/255/);
    expect(() => tx.add({ chain: { family: 'ip', table: 'err', name: 'ok', comment: 'y'.repeat(129) } })).toThrow(/128/);
    expect(() => tx.add({ set, elements: [{ key: ['198.18.0.1'] }, { key: ['not-an-address'] }] })).toThrow(/element 1 key: ipv4_addr: "not-an-address"/);
    expect(() => tx.add({ set: { family: 'ip', table: 'err', name: 'unknown' }, elements: [{ key: [1] }] })).toThrow(/types of set/);
    expect(() => tx.add({ set: { ...set, name: 'ty', typeof: { key: [{ expr: 'payload', protocol: 'ip', field: 'daddr' }, { expr: 'meta', key: 'l4proto' }] } } })).toThrow(/set ty: typeof names 2 key expression\(s\) for a 1-part key/);
    expect(tx.size).toBe(0);
    expect(() => tx.add({ chain: { family: 'ip', table: 'err', name: 'fine' } })).not.toThrow();
    expect(tx.size).toBe(1);
  });

  it('with known state, a jump to a chain that neither exists nor is added is refused', async () => {
    const known = await nft.dump();
    const tx = new Transaction({ known });
    expect(() => tx.add({ rule: rule('ip').jump('absent').rule('err', 'c') })).toThrow(NftValidationError);
    tx.add({ chain: { family: 'ip', table: 'err', name: 'present' } });
    expect(() => tx.add({ rule: rule('ip').jump('present').rule('err', 'c') })).not.toThrow();
    expect(() => tx.add({ rule: rule('ip').jump('c').rule('err', 'present') })).not.toThrow();
  });
});

describe('transactions bound to a connection (Nftables.transaction(): streamed commits)', () => {
  /** The set's elements, as the dump gives them, sorted. */
  async function keysOf(s: NftSet): Promise<string[]> {
    return (await nft.dumpSetElements(s)).elements.map((e) => String(e.key[0])).sort();
  }

  it('commits what an unbound transaction commits', async () => {
    const bound: NftSet = { ...set, name: 'bound' };
    const plain: NftSet = { ...set, name: 'plain' };
    await nft.commit(nft.transaction().add({ set: bound }).add({ set: bound, elements: addrs(30_000) }).add({ chain: { family: 'ip', table: 'err', name: 'after-bound' } }));
    await nft.commit(new Transaction().add({ set: plain }).add({ set: plain, elements: addrs(30_000) }));
    const keys = await keysOf(bound);
    expect(keys).toHaveLength(30_000);
    expect(keys).toEqual(await keysOf(plain));
    expect((await nft.dump()).chains.map((c) => c.name)).toContain('after-bound');
    await nft.commit(new Transaction().delete({ set: bound }).delete({ set: plain }));
  });

  it('a refused element deep in a streamed list is named, and nothing changes', async () => {
    const tx = nft.transaction().add({ set, elements: addrs(20_000) }).delete({ set, elements: addrsWithMissing(20_000, 17_777, '198.19.255.253') });
    expectMissingElement(await expectUnchanged(() => nft.commit(tx)), 17_777, '198.19.255.253');
  });

  it('one bad operation among 10,000, at a random position: attributed right', async () => {
    const bad = Math.floor(Math.random() * 10_000);
    const tx = nft.transaction();
    for (let i = 0; i < 10_000; i++) {
      if (i === bad) tx.add({ rule: rule('ip').match(ip.daddr, '198.18.0.9').jump('nowhere-bound').rule('err', 'c') });
      else tx.add({ set, elements: [{ key: [addr(i)] }] });
    }
    const err = await expectUnchanged(() => nft.commit(tx));
    expect(err.operationIndex).toBe(bad);
  });

  it('a stale generation is refused; a rolled-back operation, another connection and a second commit all still work', async () => {
    const gen = await nft.generation();
    await nft.commit(new Transaction().add({ chain: { family: 'ip', table: 'err', name: 'bound-moved-on' } }));
    // Large enough to be streamed: the generation travels in the streamed batch's BEGIN.
    const stale = nft.transaction().add({ chain: { family: 'ip', table: 'err', name: 'bound-stale' } }).add({ set, elements: addrs(20_000, 50_000) });
    expect(await expectUnchanged(() => nft.commit(stale, { generation: gen }))).toBeInstanceOf(NftGenerationError);

    // Element 15,000 is refused when queued, after parts of the list went to the addon.
    const s2: NftSet = { ...set, name: 'bound2' };
    const tx = nft.transaction().add({ set: s2 });
    function* withBad(): Generator<{ key: string[] }> {
      yield* addrs(15_000);
      yield { key: ['not-an-address'] };
    }
    expect(() => tx.add({ set: s2, elements: withBad() })).toThrow(/element 15000 key/);
    tx.add({ set: s2, elements: addrs(100, 40_000) });
    await nft.commit(tx);
    expect(await keysOf(s2)).toHaveLength(100);
    // Committed again (unbound now): the same request, idempotent adds.
    await nft.commit(tx);

    // Bound to one connection, committed on another.
    const other = Nftables.open({ netns: ns.name });
    try {
      await other.commit(nft.transaction().add({ set: s2, elements: addrs(20_000, 1000) }));
    } finally {
      other.close();
    }
    expect(await keysOf(s2)).toHaveLength(20_100);
    await nft.commit(new Transaction().delete({ set: s2 }));
  });
});
