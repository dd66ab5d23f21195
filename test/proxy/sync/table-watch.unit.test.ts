// The table watch's account of what happened before it subscribed, on the in-memory fake: the
// generation it armed at plus the proxy's own transactions (CountedConnection) against the
// generation once subscribed. The kernel's side (no listener during the cold start, an outside
// change found and repaired) is in table-watch.kernel.test.ts.

import { describe, expect, it } from 'vitest';
import { Transaction } from '../../../src/nft/index.js';
import { silentLogger } from '../../../src/logging/logger.js';
import { FakeNftables } from '../../../src/testing/index.js';
import { CountedConnection } from '../../../src/proxy/sync/own-commits.js';
import { TableWatch, type ExternalChange } from '../../../src/proxy/sync/table-watch.js';

const addTable = (name: string) => new Transaction().add({ table: { family: 'ip', name } });

function watchOn(fake: FakeNftables) {
  const counted = new CountedConnection(fake);
  const changes: ExternalChange[] = [];
  const watch = new TableWatch(counted, 'kube-proxy', ['ip', 'ip6'], (c) => changes.push(c), silentLogger);
  return { counted, changes, watch };
}

describe('TableWatch before it subscribes', () => {
  it('counts the transactions committed through the connection, not empty or refused ones', async () => {
    const fake = new FakeNftables();
    const { counted } = watchOn(fake);
    await counted.commit(addTable('kube-proxy'));
    await counted.commit(new Transaction());
    await expect(counted.commit(new Transaction().delete({ table: { family: 'ip', name: 'missing' } }))).rejects.toThrow();
    expect(counted.commits).toBe(1);
  });

  it('reports nothing when every commit since it armed was the proxy\'s', async () => {
    const fake = new FakeNftables();
    const { counted, changes, watch } = watchOn(fake);
    await watch.arm();
    await counted.commit(addTable('kube-proxy'));
    await counted.commit(addTable('other'));
    expect(watch.started).toBe(false);
    await watch.start();
    expect(watch.started).toBe(true);
    expect(changes).toEqual([]);
    await watch.stop();
  });

  it('reports events lost, in every family, when another writer committed meanwhile', async () => {
    const fake = new FakeNftables();
    const { counted, changes, watch } = watchOn(fake);
    await watch.arm();
    await counted.commit(addTable('kube-proxy'));
    await fake.commit(addTable('theirs'));
    await watch.start();
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ lost: true, families: new Set(['ip', 'ip6']) });
    expect([...changes[0]!.scopes.values()].every((s) => s.broad)).toBe(true);
    await watch.stop();
  });

  it('arms once: a later arm (a first sync that failed and runs again) keeps the first generation', async () => {
    const fake = new FakeNftables();
    const { counted, changes, watch } = watchOn(fake);
    await watch.arm();
    await fake.commit(addTable('theirs'));
    await watch.arm();
    await counted.commit(addTable('kube-proxy'));
    await watch.start();
    expect(changes).toHaveLength(1);
    await watch.stop();
  });

  it('reads everything back when the generation could not be read as it armed', async () => {
    const fake = new FakeNftables();
    const { changes, watch } = watchOn(fake);
    const generation = fake.generation.bind(fake);
    fake.generation = () => Promise.reject(new Error('EPERM'));
    await watch.arm();
    fake.generation = generation;
    await watch.start();
    expect(changes).toHaveLength(1);
    await watch.stop();
  });

  it('takes a commit of its own that changed nothing for an outside one (a full sync then finds nothing to write)', async () => {
    const fake = new FakeNftables();
    const { counted, changes, watch } = watchOn(fake);
    await watch.arm();
    // The fake, as the kernel, leaves the generation where it was for a batch of no-ops.
    await counted.commit(new Transaction().destroy({ table: { family: 'ip', name: 'missing' } }));
    await watch.start();
    expect(changes).toHaveLength(1);
    await watch.stop();
  });
});
