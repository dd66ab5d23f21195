// Inputs made before a case is timed, in temp files: the `nft -f` side's rendered text of the very
// transactions the nftlink side commits (rendering is not part of what `nft` is timed for), and the
// encoded batch of (a) that its floor commits without building anything.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transaction } from '../src/nft/index.js';

let dir: string | undefined;
function inputDir(): string {
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'nftlink-bench-nft-'));
    const d = dir;
    process.on('exit', () => rmSync(d, { recursive: true, force: true }));
  }
  return dir;
}

/**
 * Library gap (see the bench README/report): a map keyed by a numgen result has key type `integer`,
 * and the renderer writes `type integer : ...`, which nft 1.0.6 refuses ("unqualified type integer
 * specified in map definition. Try "typeof expression""). The nft side therefore gets the
 * equivalent declaration nft itself accepts: the same key (4 bytes, host order) and data
 * (ipv4_addr . inet_service, 8 bytes); only the set's userdata and key type id differ, which the
 * kernel stores but never evaluates.
 */
const INTEGER_MAP = /\{ type integer : ipv4_addr \. inet_service; \}/g;

export function nftText(tx: Transaction, endpoints: number): string {
  const text = tx.render().replace(INTEGER_MAP, `{ typeof numgen random mod ${endpoints} : ip daddr . tcp dport; }`);
  if (/\btype integer\b/.test(text)) throw new Error('bench: rendered text still declares `type integer`, which nft refuses');
  return text;
}

/** The transaction as the addon takes it (src/nft/netlink/wire-format.ts), for a floor that encodes nothing. */
export function writeWireFile(label: string, tx: Transaction): string {
  const path = join(inputDir(), `${label}.wire`);
  writeFileSync(path, tx.encode().buffer);
  return path;
}

/** Writes one file per transaction; returns their paths in commit order. */
export function writeNftFiles(label: string, txs: readonly Transaction[], endpoints = 1): string[] {
  return txs.map((tx, i) => {
    const path = join(inputDir(), `${label}-${i}.nft`);
    writeFileSync(path, nftText(tx, endpoints));
    return path;
  });
}
