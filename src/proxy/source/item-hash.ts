// What a re-read of a changing JSON List tells its unchanged items by: a 64-bit hash of each item's
// bytes (XXH64), kept per item from the read before (ListMemo, manifest-objects.ts). Keeping the
// hashes instead of the last read's bytes means a file that keeps changing holds one buffer, the one
// each read reads into, instead of two (11 MB less at 10k services x 5 endpoints).
//
// XXH64 through xxhash-wasm, a small, dependency-free build of the reference implementation: node's
// crypto hashes one item per call, and its per-call cost made 20k items cost 30-60 ms a read, where
// the whole 11 MB List hashes in 5-7 ms here. A change that keeps an item's hash is a 2^-64 chance
// per changed item: a List rewritten five times a second with 50 items changed meets one in about
// two billion years.
//
// Loaded on the first re-read only: a proxy that reads its manifests once (`proxy --once`, render)
// never compiles the module.

import type { XXHashAPI } from 'xxhash-wasm';

/** A 64-bit hash of bytes. */
export type ItemHasher = (bytes: Uint8Array) => bigint;

let loading: Promise<ItemHasher> | undefined;

/** The hasher (the module compiled on the first call). */
export function itemHasher(): Promise<ItemHasher> {
  loading ??= import('xxhash-wasm').then(async ({ default: xxhash }) => {
    const api: XXHashAPI = await xxhash();
    return (bytes) => api.h64Raw(bytes);
  });
  return loading;
}
