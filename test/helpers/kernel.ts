// One fresh namespace and an open netlink connection to it, shared by a file's tests.

import { afterAll, beforeAll } from 'vitest';
import { Nftables } from '../../src/index.js';
import { Netns } from './netns.js';

export function kernelSession(): { readonly ns: Netns; readonly nft: Nftables } {
  const session = {} as { ns: Netns; nft: Nftables };
  beforeAll(() => {
    session.ns = Netns.create();
    session.nft = Nftables.open({ netns: session.ns.name });
  });
  afterAll(() => {
    session.nft?.close();
    session.ns?.remove();
  });
  return session;
}
