// Inline sets and their elements digest: nftlink writes each rule's anonymous sets with a digest of
// their contents in the set's userdata, and a dump with `anonymousElements: false` leaves those
// sets' elements out (the kernel's time for them is most of a restart at thousands of services).
// Rules read that way still compare: equal to the rule as built, different from one whose inline
// set differs. Anonymous sets nftlink did not write keep their elements in such a dump; nft lists
// nftlink's as before; a rule read without its elements cannot be written back by mistake; and the
// kernel refuses element changes to a bound anonymous set, which is what lets a digest stand for them.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ip, NftCommitError, Nftables, NftValidationError, numgen, renderRuleset, rule, sameRule, Transaction, type Chain, type Expr, type NftSet, type Rule, type Ruleset } from '../../src/index.js';
import { Reconciler } from '../../src/nft/reconcile/reconciler.js';
import { FakeNftables } from '../../src/testing/index.js';
import { Netns } from '../helpers/netns.js';

const table = { family: 'ip' as const, name: 'dg' };
const chain = (name: string): Chain => ({ family: 'ip', table: 'dg', name });
const chains = ['svc', 'ep1', 'ep2', 'ep3', 'foreign'].map(chain);

/** kube-proxy's shape: numgen over the endpoints, plus an inline set of sources. */
function serviceRule(endpoints: string[], sources = ['198.18.0.1', '198.18.0.2']): Rule {
  return rule('ip')
    .lookupElements([ip.saddr], sources.map((s) => ({ key: [s] })))
    .vmap(numgen('random', endpoints.length), endpoints.map((c, i) => ({ key: [i], value: { kind: 'goto' as const, chain: c } })))
    .rule('dg', 'svc', 'the service');
}

const inlineSets = (r: Rule): NftSet[] => r.exprs.flatMap((e: Expr) => (e.type === 'lookup' && e.inline ? [e.inline] : []));
const ruleOf = (rs: Ruleset, chainName: string): Rule => rs.rules.find((r) => r.chain === chainName)!;

describe('inline sets: the elements digest', () => {
  let ns: Netns;
  let nft: Nftables;
  const built = serviceRule(['ep1', 'ep2']);
  beforeAll(async () => {
    ns = Netns.create();
    nft = Nftables.open({ netns: ns.name });
    const tx = new Transaction().add({ table });
    for (const c of chains) tx.add({ chain: c });
    await nft.commit(tx.add({ rule: built }));
    // An anonymous set nftlink did not write: no digest.
    ns.exec('nft', ['add rule ip dg foreign ip daddr { 198.18.1.1, 198.18.1.2 } accept']);
  });
  afterAll(() => {
    nft?.close();
    ns?.remove();
  });

  it('a full dump reads every inline set with its elements, and nftlink\'s with their digest', async () => {
    const rs = await nft.dump({ table: 'dg' });
    const ours = inlineSets(ruleOf(rs, 'svc'));
    expect(ours.map((s) => s.elements?.length)).toEqual([2, 2]);
    expect(ours.every((s) => /^[0-9a-f]{32}$/.test(s.elementsDigest ?? ''))).toBe(true);
    expect(ours[0]!.elementsDigest).not.toBe(ours[1]!.elementsDigest);
    const theirs = inlineSets(ruleOf(rs, 'foreign'));
    expect(theirs.map((s) => [s.elements?.length, s.elementsDigest])).toEqual([[2, undefined]]);
    expect(sameRule(ruleOf(rs, 'svc'), built)).toBe(true);
  });

  it('anonymousElements: false leaves out only the digested sets\' elements; rules still compare', async () => {
    const rs = await nft.dump({ table: 'dg', anonymousElements: false });
    const svc = ruleOf(rs, 'svc');
    expect(inlineSets(svc).map((s) => [s.elements, typeof s.elementsDigest])).toEqual([
      [undefined, 'string'],
      [undefined, 'string'],
    ]);
    expect(inlineSets(ruleOf(rs, 'foreign')).map((s) => s.elements?.length)).toEqual([2]);
    expect(sameRule(svc, built)).toBe(true);
    expect(sameRule(svc, serviceRule(['ep1', 'ep3']))).toBe(false); // another verdict
    expect(sameRule(svc, serviceRule(['ep1', 'ep2', 'ep3']))).toBe(false); // another element
    expect(sameRule(svc, serviceRule(['ep1', 'ep2'], ['198.18.0.1', '198.18.0.3']))).toBe(false); // the other set
    expect(sameRule(serviceRule(['ep1', 'ep2']), svc)).toBe(true);
  });

  it('nft lists the rule as before: it skips the userdata type it does not know', () => {
    const listed = ns.exec('nft', ['list', 'chain', 'ip', 'dg', 'svc']);
    expect(listed).toContain('ip saddr { 198.18.0.1, 198.18.0.2 } numgen random mod 2 vmap { 0 : goto ep1, 1 : goto ep2 } comment "the service"');
  });

  it('what the digest relies on: the kernel refuses any element change to an anonymous set its rule binds', async () => {
    const rs = await nft.dump({ table: 'dg' });
    const bound = inlineSets(ruleOf(rs, 'svc'))[0]!;
    const set: NftSet = { family: 'ip', table: 'dg', name: bound.name, key: bound.key };
    const before = await nft.generation();
    // Linux 6.18: an add is EBUSY (nf_tables_newsetelem), a delete or a flush EOPNOTSUPP.
    const changes: [Transaction, number][] = [
      [new Transaction().add({ set, elements: [{ key: ['198.18.0.9'] }] }), 16],
      [new Transaction().delete({ set, elements: [{ key: ['198.18.0.1'] }] }), 95],
      [new Transaction().flush({ set }), 95],
    ];
    for (const [tx, errno] of changes) {
      const err = await nft.commit(tx).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NftCommitError);
      expect((err as NftCommitError).refusals.map((r) => r.errno)).toEqual([errno]);
    }
    expect(await nft.generation()).toBe(before);
    expect(inlineSets(ruleOf(await nft.dump({ table: 'dg' }), 'svc'))[0]!.elements).toEqual(bound.elements);
  });

  it('a rule read without its elements is refused when written back, and nothing changes', async () => {
    const rs = await nft.dump({ table: 'dg', anonymousElements: false });
    const before = await nft.generation();
    // Refused as the operation is queued, naming it (the transaction encodes as it is built).
    const err = (() => {
      try {
        nft.transaction().add({ rule: ruleOf(rs, 'svc') });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(NftValidationError);
    expect((err as Error).message).toBe('nftlink: add rule ip dg svc handle 8: a rule of chain svc has an inline set read without its elements (a dump with anonymousElements: false): it cannot be written back');
    expect(await nft.generation()).toBe(before);
  });

  it('the reconciler resynced from such a dump plans nothing for the same rules, a rewrite for changed ones', async () => {
    const rec = new Reconciler();
    rec.resync(await nft.dump({ table: 'dg', anonymousElements: false }), [table]);
    // The foreign chain's rule as a full dump reads it, wanted as it is.
    const foreign = ruleOf(await nft.dump({ table: 'dg' }), 'foreign');
    const desired = (r: Rule) => ({ tables: [table], chains, sets: [], rules: [r, foreign] });
    expect(rec.plan(desired(built)).tx.size).toBe(0);
    rec.failed();
    const changed = rec.plan(desired(serviceRule(['ep2', 'ep3'])));
    expect(changed.stats.chainsWritten).toBe(1);
    await nft.commit(changed.tx);
    rec.committed();
    expect(sameRule(ruleOf(await nft.dump({ table: 'dg', anonymousElements: false }), 'svc'), serviceRule(['ep2', 'ep3']))).toBe(true);
  });

  it('chains: false reads the sets alone, the anonymous ones listed among them; the fake the same', async () => {
    const rs = await nft.dump({ table: 'dg', chains: false });
    expect([rs.chains.length, rs.rules.length]).toEqual([0, 0]);
    // Every inline set of the full dump's rules, now a set of its own.
    const full = await nft.dump({ table: 'dg' });
    const inline = full.rules.flatMap(inlineSets).map((s) => s.name).sort();
    expect(rs.sets.filter((s) => s.anonymous).map((s) => s.name).sort()).toEqual(inline);
    expect(inline).toHaveLength(3);
    const summary = (r: Ruleset): unknown => r.sets.filter((s) => s.elementsDigest !== undefined).map((s) => [s.anonymous, s.elements?.length, s.elementsDigest]).sort();
    expect(summary(rs)).toEqual(inlineSets(ruleOf(full, 'svc')).map((s) => [true, 2, s.elementsDigest]).sort());
    // Without elements, and on the fake holding the same rule (as the kernel holds it now: the tests
    // before this one rewrite it).
    const fake = new FakeNftables();
    const tx = new Transaction().add({ table });
    for (const c of chains) tx.add({ chain: c });
    const { handle: _handle, ...svc } = ruleOf(full, 'svc');
    await fake.commit(tx.add({ rule: svc }));
    const bare = { table: 'dg', chains: false, elements: false };
    expect(summary(await fake.dump(bare))).toEqual(summary(await nft.dump(bare)));
    expect(summary(await fake.dump({ table: 'dg', chains: false }))).toEqual(summary(rs));
    await expect(nft.dump({ table: 'dg', chains: false, chain: 'svc' })).rejects.toThrow(/chains: false/);
  });

  it('the fake gives the same digests, and the same dump without the elements', async () => {
    const fake = new FakeNftables();
    const tx = new Transaction().add({ table });
    for (const c of chains) tx.add({ chain: c });
    await fake.commit(tx.add({ rule: serviceRule(['ep2', 'ep3']) }));
    const digests = async (conn: Nftables | FakeNftables): Promise<(string | undefined)[]> => inlineSets(ruleOf(await conn.dump({ table: 'dg' }), 'svc')).map((s) => s.elementsDigest);
    expect(await digests(fake)).toEqual(await digests(nft));
    const without = async (conn: Nftables | FakeNftables): Promise<unknown> => inlineSets(ruleOf(await conn.dump({ table: 'dg', anonymousElements: false }), 'svc')).map((s) => [s.elements, s.elementsDigest]);
    expect(await without(fake)).toEqual(await without(nft));
    expect(renderRuleset(await fake.dump({ table: 'dg' }))).toContain('numgen random mod 2 vmap { 0 : goto ep2, 1 : goto ep3 }');
  });
});
