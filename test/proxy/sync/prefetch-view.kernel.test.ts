// A restart's read of the kernel, started before the sync that takes it (FamilySync.prefetchView,
// while the proxy builds the state): the sync reads nothing more; and a request for a full sync
// that comes in between (the table changed meanwhile) makes the sync read again.

import { afterAll, expect, it, vi } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchModel, benchConfig } from '../../fixtures/scale-model.js';
import { Nftables } from '../../../src/nft/client.js';
import { silentLogger } from '../../../src/logging/logger.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import { stateSize } from '../../../src/proxy/model/state-size.js';
import { FamilySync } from '../../../src/proxy/sync/family-sync.js';
import { namespacesForFile } from '../../helpers/netns.js';

const freshNetns = namespacesForFile(afterAll);

it('a prefetched read is the sync\'s only dump; one made stale by a full-sync request is read again', async () => {
  const ns = freshNetns();
  const nft = Nftables.open({ netns: ns.name });
  try {
    const model = new BenchModel(50, 3);
    const cfg = benchConfig();
    const first = new FamilySync(nft, new SlotsLayout(), cfg, silentLogger);
    await first.sync(model.state(), undefined);
    first.settleIndex();
    const dumps = vi.spyOn(nft, 'dump');

    // A restart: the read starts before the sync, which takes it and finds nothing to write.
    const restart = new FamilySync(nft, new SlotsLayout(), cfg, silentLogger);
    expect(restart.readPending).toBe(true);
    restart.prefetchView(stateSize(model.state()));
    expect(restart.readPending).toBe(false);
    expect(await restart.sync(model.state(), undefined)).toMatchObject({ full: true, operations: 0 });
    expect(dumps).toHaveBeenCalledTimes(1);

    // Another restart reads first; then the table goes, and the table watch asks for a full sync.
    dumps.mockClear();
    const again = new FamilySync(nft, new SlotsLayout(), cfg, silentLogger);
    again.prefetchView(stateSize(model.state()));
    // The read of a 50-service table is long done by then (it would have seen the table whole).
    await sleep(300);
    ns.exec('nft', ['delete', 'table', 'ip', cfg.table]);
    again.requestFullSync();
    const repaired = await again.sync(model.state(), undefined);
    expect(dumps).toHaveBeenCalledTimes(2);
    expect(repaired.operations).toBeGreaterThan(0);
    again.settleIndex();
    expect(ns.exec('nft', ['list', 'tables'])).toContain(`ip ${cfg.table}`);
    expect(await new FamilySync(nft, new SlotsLayout(), cfg, silentLogger).sync(model.state(), undefined)).toMatchObject({ operations: 0 });
  } finally {
    nft.close();
  }
});
