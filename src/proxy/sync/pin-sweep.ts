// Session-affinity pins the packet path wrote to endpoints a sync removed: read back and deleted
// right after the commit (after it, no new pin can point there). `destroy`, since a pin may expire
// meanwhile. A failure is logged, not fatal: such a pin times out on its own.

import { Transaction, type NftConnection } from '../../nft/index.js';
import type { Logger } from '../../logging/logger.js';
import type { Layout, LayoutConfig } from '../layout/types.js';

export async function deleteStalePins(nft: NftConnection, layout: Layout, cfg: LayoutConfig, log: Logger): Promise<void> {
  for (const sweep of layout.stalePins?.(cfg) ?? []) {
    try {
      const { elements } = await nft.dumpSetElements(sweep.set);
      const stale = elements.filter((e) => sweep.stale(e));
      if (stale.length) await nft.commit(new Transaction().destroy({ set: sweep.set, elements: stale }));
    } catch (err) {
      log.warn('cannot delete affinity pins of removed endpoints', { family: sweep.set.family, set: sweep.set.name, reason: (err as Error).message });
    }
  }
}
