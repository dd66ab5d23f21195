// Rules and the digest of their expressions: nftlink writes each new rule's userdata with its
// comment, its tag and a digest of its expressions, and a dump with `ruleExprs: false` leaves the
// expressions of such rules out (decoding them is most of what reading a large table costs).
// Rules read that way come with their comment, tag and digest, and still compare: equal to the rule
// as built, different from one whose expressions, comment or tag differ. The encoder hashes the
// bytes it wrote, or encodes a rule again where those name a set for one transaction only (an
// inline set): both give what exprsDigestOf gives. Rules nftlink did not write come whole; nft
// lists nftlink's rules as before; and a rule read without its expressions cannot be written back.
// The kernel fake answers the same.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exprsDigestOf } from '../../src/nft/rule-digest.js';
import { ip, Nftables, NftValidationError, numgen, rule, sameRule, tcp, Transaction, type Chain, type NftConnection, type Rule, type Ruleset } from '../../src/index.js';
import { FakeNftables } from '../../src/testing/index.js';
import { Netns } from '../helpers/netns.js';

const table = { family: 'ip' as const, name: 'rd' };
const chain = (name: string): Chain => ({ family: 'ip', table: 'rd', name });
const chains = ['plain', 'inline', 'ep1', 'ep2', 'foreign'].map(chain);

const plainRule = (port = 80, tag = 'slot 3 7 5', comment = 'the plain one'): Rule =>
  rule('ip').match(ip.saddr, '198.18.0.1').match(tcp.dport, port).accept().tag(tag).rule('rd', 'plain', comment);
/** Its bytes name an inline set for one transaction only: the encoder digests it by encoding it again. */
const inlineRule = (sources = ['198.18.0.1', '198.18.0.2']): Rule =>
  rule('ip')
    .lookupElements([ip.saddr], sources.map((s) => ({ key: [s] })))
    .vmap(numgen('random', 2), [
      { key: [0], value: { kind: 'goto', chain: 'ep1' } },
      { key: [1], value: { kind: 'goto', chain: 'ep2' } },
    ])
    .rule('rd', 'inline');

const ruleOf = (rs: Ruleset, chainName: string): Rule => rs.rules.find((r) => r.chain === chainName)!;

async function program(conn: NftConnection): Promise<void> {
  const tx = new Transaction().add({ table });
  for (const c of chains) tx.add({ chain: c });
  await conn.commit(tx.add({ rule: plainRule() }).add({ rule: inlineRule() }));
}

describe('rules: the expressions digest', () => {
  let ns: Netns;
  let nft: Nftables;
  const fake = new FakeNftables();
  beforeAll(async () => {
    ns = Netns.create();
    nft = Nftables.open({ netns: ns.name });
    await program(nft);
    await program(fake);
    // A rule nftlink did not write: no digest.
    ns.exec('nft', ['add rule ip rd foreign ip daddr 198.18.1.1 tcp dport 443 accept']);
  });
  afterAll(() => {
    nft?.close();
    ns?.remove();
  });

  it('ruleExprs: false leaves out the expressions of the rules nftlink wrote, with their digest, tag and comment', async () => {
    for (const conn of [nft, fake]) {
      const rs = await conn.dump({ table: 'rd', ruleExprs: false });
      const plain = ruleOf(rs, 'plain');
      expect(plain).toMatchObject({ exprs: [], exprsDigest: exprsDigestOf(plainRule().exprs), tag: 'slot 3 7 5', comment: 'the plain one' });
      expect(ruleOf(rs, 'inline')).toMatchObject({ exprs: [], exprsDigest: exprsDigestOf(inlineRule().exprs) });
      expect(ruleOf(rs, 'inline').tag).toBeUndefined();
      // One chain's rules, as a metrics scrape or a targeted repair reads them.
      expect((await conn.dump({ table: 'rd', chain: 'plain', ruleExprs: false })).rules).toEqual([plain]);
    }
    const foreign = ruleOf(await nft.dump({ table: 'rd', ruleExprs: false }), 'foreign');
    expect(foreign.exprs.length).toBeGreaterThan(0);
    expect(foreign.exprsDigest).toBeUndefined();
  });

  it('rules read that way compare by digest: equal to the rule as built, different once anything differs', async () => {
    for (const conn of [nft, fake]) {
      const rs = await conn.dump({ table: 'rd', ruleExprs: false });
      const plain = ruleOf(rs, 'plain');
      const inline = ruleOf(rs, 'inline');
      expect(sameRule(plain, plainRule())).toBe(true);
      expect(sameRule(plainRule(), plain)).toBe(true);
      expect(sameRule(inline, inlineRule())).toBe(true);
      expect(sameRule(inline, inlineRule(['198.18.0.2', '198.18.0.1']))).toBe(true); // a set has no order
      expect(sameRule(plain, plainRule(81))).toBe(false);
      expect(sameRule(plain, plainRule(80, 'slot 3 7 4'))).toBe(false);
      expect(sameRule(plain, plainRule(80, 'slot 3 7 5', 'another'))).toBe(false);
      expect(sameRule(inline, inlineRule(['198.18.0.1', '198.18.0.3']))).toBe(false);
    }
  });

  it('a full dump reads the expressions, and the tag, without a digest', async () => {
    for (const conn of [nft, fake]) {
      const plain = ruleOf(await conn.dump({ table: 'rd' }), 'plain');
      expect(plain.exprs.length).toBe(plainRule().exprs.length);
      expect(plain.exprsDigest).toBeUndefined();
      expect(plain.tag).toBe('slot 3 7 5');
      expect(sameRule(plain, plainRule())).toBe(true);
    }
  });

  it('nft lists the rules as before: it skips the userdata types it does not know', () => {
    const listed = ns.exec('nft', ['list', 'table', 'ip', 'rd']);
    expect(listed).toContain('ip saddr 198.18.0.1 tcp dport 80 accept comment "the plain one"');
    expect(listed).toContain('ip saddr { 198.18.0.1, 198.18.0.2 } numgen random mod 2 vmap { 0 : goto ep1, 1 : goto ep2 }');
  });

  it('a rule read without its expressions is refused when written back, and nothing changes; it can still be deleted', async () => {
    for (const conn of [nft, fake]) {
      const rs = await conn.dump({ table: 'rd', ruleExprs: false });
      const plain = ruleOf(rs, 'plain');
      const before = await conn.generation();
      let err: unknown;
      try {
        conn.transaction().add({ rule: plain });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(NftValidationError);
      expect((err as Error).message).toBe(`nftlink: add rule ip rd plain handle ${plain.handle}: a rule of chain plain was read without its expressions (a dump with ruleExprs: false): it cannot be written back`);
      expect(await conn.generation()).toBe(before);
      await conn.commit(new Transaction().delete({ rule: plain }));
      expect((await conn.dump({ table: 'rd', chain: 'plain' })).rules).toEqual([]);
      await conn.commit(new Transaction().add({ rule: plainRule() }));
    }
  });

  it('a tag is at most 64 bytes', () => {
    expect(() => new Transaction().add({ rule: plainRule(80, 'x'.repeat(65)) })).toThrow('the tag of a rule of chain plain is 65 bytes; at most 64');
    expect(() => new Transaction().add({ rule: plainRule(80, 'x'.repeat(64)) })).not.toThrow();
  });
});
