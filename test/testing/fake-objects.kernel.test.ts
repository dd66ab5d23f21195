// FakeNftables against the kernel for named objects, flowtables' neighbours and ingress chains
// (needs root: a fresh network namespace with two veth ends): the same transactions, refused ones
// included, go to both, and after every step both agree on the outcome, the generation's step, the
// handles (objects take theirs from the table's counter, as chains and sets do) and the ruleset.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ip, NftCommitError, Nftables, renderRuleset, rule, Transaction, types } from '../../src/index.js';
import type { NftConnection, NftObject, Ruleset } from '../../src/index.js';
import { FakeNftables } from '../../src/testing/index.js';
import { Netns } from '../helpers/netns.js';

const t = { family: 'inet', table: 'eqo' } as const;
const hits: NftObject = { ...t, name: 'hits', type: 'counter' };
const cap: NftObject = { ...t, name: 'cap', type: 'quota', bytes: 1000 };
const slow: NftObject = { ...t, name: 'slow', type: 'limit', rate: 10, per: 'second', burst: 5 };
const ftp: NftObject = { ...t, name: 'ftp', type: 'ct helper', helper: 'ftp', protocol: 'tcp' };
const edge = { ...t, name: 'edge', base: { type: 'filter', hook: 'ingress', priority: 0, devices: ['d0'] } } as const;
const input = { ...t, name: 'input', base: { type: 'filter', hook: 'input', priority: 0 } } as const;

const steps: { name: string; tx: () => Transaction }[] = [
  {
    name: 'objects, an ingress chain and rules that use them',
    tx: () =>
      new Transaction()
        .add({ table: { family: 'inet', name: 'eqo' } })
        .add({ object: hits })
        .add({ object: cap })
        .add({ object: slow })
        .add({ object: ftp })
        .add({ chain: edge })
        .add({ chain: input })
        .add({ rule: rule('inet').object('counter', 'hits').rule('eqo', 'edge') })
        .add({ rule: rule('inet').object('quota', 'cap').object('limit', 'slow').rule('eqo', 'input') }),
  },
  { name: 'add of an existing counter', tx: () => new Transaction().add({ object: hits }) },
  { name: 'add of an existing quota with another size', tx: () => new Transaction().add({ object: { ...cap, bytes: 2000 } }) },
  { name: 'add of an existing limit with another rate', tx: () => new Transaction().add({ object: { ...slow, rate: 20 } }) },
  { name: 'create of an existing limit', tx: () => new Transaction().create({ object: slow }) },
  { name: 'delete of an object a rule uses', tx: () => new Transaction().delete({ object: hits }) },
  { name: 'delete of a missing object', tx: () => new Transaction().delete({ object: { ...t, name: 'nope', type: 'quota' } }) },
  { name: 'destroy of a missing object', tx: () => new Transaction().destroy({ object: { ...t, name: 'nope', type: 'quota' } }) },
  { name: 'an object in a missing table', tx: () => new Transaction().add({ object: { ...hits, table: 'missing' } }) },
  { name: 'delete of an unused object', tx: () => new Transaction().delete({ object: ftp }) },
  { name: 'the same name for another type', tx: () => new Transaction().add({ object: { ...t, name: 'hits', type: 'quota', bytes: 5 } }) },
  { name: 'a rule that names a missing object', tx: () => new Transaction().add({ rule: rule('inet').object('counter', 'cap').rule('eqo', 'input') }) },
  { name: 'an ingress chain on a device that does not exist', tx: () => new Transaction().add({ chain: { ...edge, name: 'ghost', base: { ...edge.base, devices: ['nosuch0'] } } }) },
  { name: 'add of the ingress chain with another device', tx: () => new Transaction().add({ chain: { ...edge, base: { ...edge.base, devices: ['d0p'] } } }) },
  { name: 'an inet ingress chain on two devices', tx: () => new Transaction().add({ chain: { ...edge, name: 'two', base: { ...edge.base, devices: ['d0', 'd0p'] } } }) },
  {
    name: 'a map of counters and a rule that picks from it',
    tx: () =>
      new Transaction()
        .add({ set: { ...t, name: 'cm', key: [types.ipv4_addr], objects: 'counter', elements: [{ key: ['198.18.0.1'], value: ['hits'] }] } })
        .add({ rule: rule('inet').objectFromMap(ip.daddr, 'cm').rule('eqo', 'input') }),
  },
  { name: 'an element naming a missing object', tx: () => new Transaction().add({ set: { ...t, name: 'cm', key: [types.ipv4_addr], objects: 'counter' }, elements: [{ key: ['198.18.0.2'], value: ['nope'] }] }) },
  { name: 'delete of an object only a map element names', tx: () => new Transaction().add({ object: { ...t, name: 'spare', type: 'counter' } }).add({ set: { ...t, name: 'cm', key: [types.ipv4_addr], objects: 'counter' }, elements: [{ key: ['198.18.0.3'], value: ['spare'] }] }) },
  { name: 'the delete itself', tx: () => new Transaction().delete({ object: { ...t, name: 'spare', type: 'counter' } }) },
  { name: 'delete of the ingress chain', tx: () => new Transaction().delete({ chain: edge }) },
];

async function outcome(conn: NftConnection, tx: Transaction): Promise<string[]> {
  try {
    await conn.commit(tx);
    return ['ok'];
  } catch (err) {
    if (!(err instanceof NftCommitError)) throw err;
    return err.refusals.map((r) => `${r.errno} op ${r.operationIndex}: ${r.reason ?? ''}`);
  }
}

const handlesOf = (rs: Ruleset): string => [rs.tables, rs.chains, rs.rules, rs.objects ?? []].map((list) => list.map((o) => o.handle).join(',')).join(' | ');

describe('FakeNftables behaves as the kernel with named objects and ingress chains', () => {
  let ns: Netns;
  let kernel: Nftables;
  const fake = new FakeNftables();
  beforeAll(() => {
    ns = Netns.create();
    ns.exec('ip', ['link', 'add', 'd0', 'type', 'veth', 'peer', 'name', 'd0p']);
    kernel = Nftables.open({ netns: ns.name });
  });
  afterAll(() => {
    kernel?.close();
    ns?.remove();
  });

  it('step by step: outcome, generation, handles and ruleset', async () => {
    for (const step of steps) {
      const gens = [await kernel.generation(), await fake.generation()];
      const kernelOutcome = await outcome(kernel, step.tx());
      const fakeOutcome = await outcome(fake, step.tx());
      expect({ step: step.name, outcome: fakeOutcome }).toEqual({ step: step.name, outcome: kernelOutcome });
      expect({ step: step.name, steps: (await fake.generation()) - gens[1]! }).toEqual({ step: step.name, steps: (await kernel.generation()) - gens[0]! });
      expect({ step: step.name, handles: handlesOf(await fake.dump()) }).toEqual({ step: step.name, handles: handlesOf(await kernel.dump()) });
      expect({ step: step.name, ruleset: fake.render() }).toEqual({ step: step.name, ruleset: renderRuleset(await kernel.dump()) });
    }
  });
});
