// Shared sets a state fills beyond what reading them back is worth. The kernel's element dump
// starts each message (at most 32 KiB) by walking past every element it sent before, so reading a
// set costs the square of its size (Linux 6.18, nf_tables_dump_set): the hairpin set of 100k
// services x 5 endpoints (500k elements) took the kernel seconds to dump, more than the restart's
// whole cold start. A full sync leaves such sets out of its dump and writes them afresh instead
// (flush, then add, in its one transaction: ElementIndex.resyncFromDump).

import type { StateSize } from '../model/state-size.js';
import { SET } from './names.js';

/**
 * The size from which a set is written afresh rather than read back. Reading a hairpin-shaped set
 * costs what rewriting it does at about 50k elements, 1.6 times as much at 100k and 4 times at
 * 150k; below 100k the read is mostly done while the restart builds its state (the dump runs
 * meanwhile), where the rewrite would add to its commit. docs/decisions.md has the figures.
 */
export const LARGE_SET_ELEMENTS = 100_000;

/** The hairpin set holds one element per endpoint of every service port. */
export function largeSets(size: StateSize): string[] {
  return size.endpoints > LARGE_SET_ELEMENTS ? [SET.hairpinConnections] : [];
}
