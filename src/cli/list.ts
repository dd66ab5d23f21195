// `nftlink list`: the kernel's ruleset over netlink, printed as nft text that `nft -f` accepts.

import { Nftables, renderRuleset, type Family } from '../nft/index.js';

export interface ListOptions {
  netns?: string;
  table?: { family: Family; name: string };
}

export async function listRuleset(opts: ListOptions): Promise<string> {
  const nft = Nftables.open(opts.netns !== undefined ? { netns: opts.netns } : {});
  try {
    const rs = await nft.dump(opts.table ? { family: opts.table.family, table: opts.table.name } : {});
    return renderRuleset(rs);
  } finally {
    nft.close();
  }
}
