// At least once an hour (kube-proxy's FullSyncPeriod) a sync compares everything with a fresh dump,
// even with nothing changed, and so repairs what others did to the table: here, deleted it.

import { afterAll, expect, it } from 'vitest';
import { BenchModel, benchConfig, change } from '../../fixtures/scale-model.js';
import { Nftables } from '../../../src/nft/client.js';
import { silentLogger } from '../../../src/logging/logger.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import { FamilySync, FULL_SYNC_PERIOD_MS } from '../../../src/proxy/sync/family-sync.js';
import { namespacesForFile } from '../../helpers/netns.js';

const freshNetns = namespacesForFile(afterAll);

it('an hour after the last full sync, a sync with nothing changed dumps, finds the deleted table and writes it whole', async () => {
  const ns = freshNetns();
  const nft = Nftables.open({ netns: ns.name });
  try {
    let clock = 5_000_000;
    const model = new BenchModel(50, 3);
    const cfg = benchConfig();
    const sync = new FamilySync(nft, new SlotsLayout(), cfg, silentLogger, () => clock);
    await sync.sync(model.state(), undefined);
    const tableName = `ip ${cfg.table}`;
    expect(ns.exec('nft', ['list', 'tables'])).toContain(tableName);
    ns.exec('nft', ['delete', 'table', 'ip', cfg.table]);

    // Within the hour, nothing changed: nothing is read or written (the table stays gone).
    clock += FULL_SYNC_PERIOD_MS - 1;
    const quiet = await sync.sync(model.state(), change({}));
    expect(quiet).toMatchObject({ full: false, operations: 0 });
    expect(ns.exec('nft', ['list', 'tables'])).not.toContain(tableName);

    clock += 1;
    const hourly = await sync.sync(model.state(), change({}));
    expect(hourly.full).toBe(true);
    expect(hourly.operations).toBeGreaterThan(0);
    sync.settleIndex();
    // The table is whole again: a fresh engine finds nothing to write.
    const restarted = await new FamilySync(nft, new SlotsLayout(), cfg, silentLogger).sync(model.state(), undefined);
    expect(restarted.operations).toBe(0);
    // And the next hour starts from this full sync.
    clock += FULL_SYNC_PERIOD_MS - 1;
    expect(await sync.sync(model.state(), change({}))).toMatchObject({ full: false, operations: 0 });
  } finally {
    nft.close();
  }
});
