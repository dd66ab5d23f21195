// Read-back: a dump decodes into the same objects that were written (rendered, they are the same
// text), and `nftlink list` of a ruleset that nft itself loaded is nft text that reproduces it.

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuleset } from '../../src/cli/list.js';
import { Nftables, renderRuleset, Transaction } from '../../src/index.js';
import { RulesetModel } from '../../src/nft/model.js';
import { sameRules } from '../../src/nft/reconcile/rule-equality.js';
import { elementKey } from '../../src/nft/values.js';
import { coverageRuleset } from '../fixtures/coverage.js';
import { kubeProxyShape } from '../fixtures/kube-proxy-shape.js';
import { namespacesForFile } from '../helpers/netns.js';
import { FIXTURES } from '../fixtures/index.js';

const ns = namespacesForFile(afterAll);


describe.each(FIXTURES)('%s', (_name, build) => {
  it('dump, then render, equals what was written', async () => {
    const target = ns();
    const tx = build();
    const nft = Nftables.open({ netns: target.name });
    try {
      await nft.commit(tx);
      const dumped = await nft.dump();
      const written = new RulesetModel().apply(tx.operations).ruleset();
      expect(renderRuleset(dumped)).toBe(renderRuleset(written));
      expect(dumped.rules.length).toBe(written.rules.length);
      expect(dumped.rules.every((r) => typeof r.handle === 'number')).toBe(true);
      // The reconciler's rule identity survives the round trip: what was written equals what is read.
      expect(sameRules(dumped.rules, written.rules)).toBe(true);
      // Element identities read from the kernel's bytes are the ones elementKey computes.
      const keyed = await nft.dump({ elementKeys: true });
      const plain = keyed.sets.filter((s) => s.elements?.length && !s.flags?.includes('interval'));
      expect(plain.length).toBeGreaterThan(0);
      for (const s of plain) expect(s.elementKeys).toEqual(s.elements!.map((e) => elementKey(s, e)));
      expect(keyed.sets.filter((s) => s.flags?.includes('interval')).every((s) => s.elementKeys === undefined)).toBe(true);
    } finally {
      nft.close();
    }
  });
});

describe('nftlink list of a ruleset nft loaded', () => {
  const sources = [
    ['hand-written nft text', readFileSync(new URL('../fixtures/handwritten.nft', import.meta.url), 'utf8')],
    ['the kube-proxy shape', kubeProxyShape('ip').render()],
    ['every expression', coverageRuleset().render()],
  ] as const;
  it.each(sources)('%s: fed back to nft -f, gives the same nft list ruleset', async (_name, text) => {
    const original = ns();
    original.nftApply(text);
    const listed = await listRuleset({ netns: original.name });
    const copy = ns();
    copy.nftApply(listed);
    expect(copy.nftList()).toBe(original.nftList());
  });

  it('a dump of one chain returns only its rules', async () => {
    const target = ns();
    target.nftApply(sources[0][1]);
    const nft = Nftables.open({ netns: target.name });
    try {
      const rs = await nft.dump({ family: 'ip', table: 'kp', chain: 'nat-prerouting' });
      expect(rs.rules.length).toBe(7);
      expect(new Set(rs.rules.map((r) => r.chain))).toEqual(new Set(['nat-prerouting']));
      expect(rs.chains).toEqual([]);
      expect(rs.sets).toEqual([]);
    } finally {
      nft.close();
    }
  });

  it('--table limits the listing to one table', async () => {
    const original = ns();
    original.nftApply(sources[0][1]);
    const listed = await listRuleset({ netns: original.name, table: { family: 'inet', name: 't' } });
    expect(listed).toMatch(/^table inet t \{/);
    expect(listed).not.toContain('table ip kp');
  });
});

describe('a dump that the table changes under', () => {
  it('asks for both halves at once: the second is not held back until this thread takes the first', async () => {
    const target = ns();
    const nft = Nftables.open({ netns: target.name });
    try {
      await nft.commit(coverageRuleset());
      const native = (nft as unknown as { native: { dump: (...a: unknown[]) => Promise<Uint8Array> } }).native;
      const real = native.dump.bind(native);
      let firstTaken = false;
      const askedBeforeFirstTaken: boolean[] = [];
      native.dump = (...a: unknown[]) => {
        askedBeforeFirstTaken.push(!firstTaken);
        const p = real(...a);
        if (askedBeforeFirstTaken.length === 1) void p.then(() => (firstTaken = true));
        return p;
      };
      await nft.dump();
      expect(askedBeforeFirstTaken).toEqual([true, true]);
    } finally {
      nft.close();
    }
  });

  it('reads both halves again when the table changed between them, and returns one generation', async () => {
    const target = ns();
    const tx = coverageRuleset();
    const nft = Nftables.open({ netns: target.name });
    const other = Nftables.open({ netns: target.name });
    try {
      await nft.commit(tx);
      // dump() asks for the rules, and for the sets with their elements (decoding the one while the
      // kernel produces the other). Commit a chain before the first try's second half is read.
      const native = (nft as unknown as { native: { dump: (...a: unknown[]) => Promise<Uint8Array> } }).native;
      const real = native.dump.bind(native);
      let calls = 0;
      let firstHalf: Promise<Uint8Array> | undefined;
      native.dump = async (...a: unknown[]) => {
        if (++calls === 1) return (firstHalf = real(...a));
        if (calls === 2) {
          await firstHalf;
          await other.commit(new Transaction().add({ chain: { family: 'inet', table: 'cov', name: 'added-meanwhile' } }));
        }
        return real(...a);
      };
      const dumped = await nft.dump();
      expect(calls).toBe(4);
      expect(dumped.chains.map((c) => c.name)).toContain('added-meanwhile');
      expect(dumped.generation).toBe(await nft.generation());
    } finally {
      nft.close();
      other.close();
    }
  });
});
