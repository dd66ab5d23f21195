// A full sync's layout preparation (the chain names' hashes) runs while the table is read, a slice
// at a time: a restart prepares every service port (its comparison needs the names), a cold start
// stops once the read is in and holds none of our chains, so that its first part goes sooner (the
// parts hash the rest as they plan them).

import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/logging/logger.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import type { ServicePort } from '../../../src/proxy/model/types.js';
import { FamilySync } from '../../../src/proxy/sync/family-sync.js';
import { FakeNftables } from '../../../src/testing/index.js';
import { BenchModel, benchConfig } from '../../fixtures/scale-model.js';

/** The slots layout, counting the service ports it is asked to prepare. */
class CountingLayout extends SlotsLayout {
  prepared = 0;
  override prepare(ports: readonly ServicePort[]): void {
    this.prepared += ports.length;
    super.prepare(ports);
  }
}

describe('preparing while the table is read', () => {
  it('a cold start leaves most of it to its parts; a restart prepares every service port; both write the same table', async () => {
    const model = new BenchModel(2500, 2);
    const fake = new FakeNftables();
    const cold = new CountingLayout();
    const first = new FamilySync(fake, cold, benchConfig(), silentLogger);
    const written = await first.sync(model.state(), undefined);
    expect(written.operations).toBeGreaterThan(0);
    // The fake's empty table is read before the first slice's turn of the event loop ends.
    expect(cold.prepared).toBeGreaterThan(0);
    expect(cold.prepared).toBeLessThan(2500);
    first.settleIndex();

    const warm = new CountingLayout();
    const restart = new FamilySync(fake, warm, benchConfig(), silentLogger);
    expect(await restart.sync(model.state(), undefined)).toMatchObject({ full: true, operations: 0 });
    expect(warm.prepared).toBe(2500);
  });
});
