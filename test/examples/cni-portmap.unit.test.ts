// nftlink-portmap's planning against the library's in-memory fake (nftlink/testing), without root:
// the paths a kernel test cannot force (a race lost at every attempt, a kernel refusal), and the
// idempotence of ADD and DEL counted in commits. The plugin imports the package by name, so these
// run against the built library (npm run build:ts), as the plugin itself does.

import { describe, expect, it } from 'vitest';
import { Transaction, type NftConnection } from 'nftlink';
import { FakeNftables } from 'nftlink/testing';
import { CniError } from '../../examples/cni-portmap/src/cni.js';
import type { PortMapConfig } from '../../examples/cni-portmap/src/config.js';
import { addMappings, checkMappings, removeMappings } from '../../examples/cni-portmap/src/portmap.js';

const conf = (i: number, snat = true): PortMapConfig => ({
  cniVersion: '1.0.0',
  name: 'net',
  snat,
  mappings: [{ hostPort: 8000 + i, containerPort: 80, protocol: 'tcp' }],
  addresses: [
    { family: 'ip', address: `198.18.10.${10 + i}`, subnet: '198.18.10.0/24' },
    { family: 'ip6', address: `2001:db8:10::${10 + i}`, subnet: '2001:db8:10::/64' },
  ],
});
const attachment = (i: number) => ({ network: 'net', containerId: `c${i}`, ifname: 'eth0' });

/** The fake behind an NftConnection of the test's, with `over` replacing some of its methods. */
function wrap(nft: FakeNftables, over: Partial<NftConnection>): NftConnection {
  return {
    transaction: (o) => nft.transaction(o),
    commit: (tx, o) => nft.commit(tx, o),
    check: (tx) => nft.check(tx),
    dump: (o) => nft.dump(o),
    dumpSetElements: (set) => nft.dumpSetElements(set),
    generation: () => nft.generation(),
    close: () => nft.close(),
    ...over,
  };
}

/** Counts the commits that reach the connection. */
function counting(nft: FakeNftables): { conn: NftConnection; commits: () => number } {
  let n = 0;
  const conn = wrap(nft, {
    commit: (tx, opts) => {
      n++;
      return nft.commit(tx, opts);
    },
  });
  return { conn, commits: () => n };
}

let others = 0;
/** A connection on which someone else commits (a new table) between each of the first `times` reads and the plugin's commit. */
function contended(nft: FakeNftables, times: number): { conn: NftConnection; raced: () => number } {
  let raced = 0;
  const conn = wrap(nft, {
    dump: async (opts) => {
      const d = await nft.dump(opts);
      if (raced < times) {
        raced++;
        await nft.commit(new Transaction().add({ table: { family: 'ip', name: `other-${others++}` } }));
      }
      return d;
    },
  });
  return { conn, raced: () => raced };
}

async function code(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (err instanceof CniError) return err.code;
    throw err;
  }
}

describe('nftlink-portmap on FakeNftables', () => {
  it('ADD again commits nothing; DEL leaves the ruleset as before ADD; DEL again commits nothing', async () => {
    const nft = new FakeNftables();
    const { conn, commits } = counting(nft);
    await addMappings(conn, attachment(1), conf(1));
    const withOne = nft.render();
    expect(commits()).toBe(1);
    await addMappings(conn, attachment(1), conf(1));
    expect(commits()).toBe(1);
    await addMappings(conn, attachment(2), conf(2));
    await checkMappings(conn, attachment(1), conf(1));
    await checkMappings(conn, attachment(2), conf(2));
    await removeMappings(conn, attachment(2));
    expect(nft.render()).toBe(withOne);
    await removeMappings(conn, attachment(1));
    expect(nft.render()).toBe('');
    const before = commits();
    await removeMappings(conn, attachment(1));
    expect(commits()).toBe(before);
  });

  it('a changed mapping fails CHECK with 101, and ADD puts it back', async () => {
    const nft = new FakeNftables();
    await addMappings(nft, attachment(1), conf(1));
    await addMappings(nft, attachment(1), { ...conf(1), mappings: [{ hostPort: 8001, containerPort: 81, protocol: 'tcp' }] });
    expect(await code(checkMappings(nft, attachment(1), conf(1)))).toBe(101);
    await addMappings(nft, attachment(1), conf(1));
    expect(await code(checkMappings(nft, attachment(1), conf(1)))).toBeUndefined();
  });

  it('reads again after losing a race, and gives up with 11 after 20', async () => {
    const nft = new FakeNftables();
    const three = contended(nft, 3);
    await addMappings(three.conn, attachment(1), conf(1));
    expect(three.raced()).toBe(3);
    expect(await code(checkMappings(nft, attachment(1), conf(1)))).toBeUndefined();
    const always = contended(nft, Infinity);
    expect(await code(addMappings(always.conn, attachment(2), conf(2)))).toBe(11);
    expect(always.raced()).toBe(20);
    expect(await code(checkMappings(nft, attachment(2), conf(2)))).toBe(101);
  });

  it('a kernel refusal is error 100 with nftlink\'s message in the details, and nothing is written', async () => {
    const nft = new FakeNftables();
    nft.refuse((op) => op.kind === 'rule', 'ENOMEM');
    const err = await addMappings(nft, attachment(1), conf(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CniError);
    expect(err).toMatchObject({ code: 100, message: 'the kernel refused the nftables transaction', details: expect.stringMatching(/ENOMEM|Cannot allocate memory/) });
    expect(nft.render()).toBe('');
  });
});
