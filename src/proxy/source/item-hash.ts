// What a re-read of a changing JSON List tells its unchanged items by: a 64-bit hash of each item's
// bytes (XXH64), kept per item from the read before (ListMemo, manifest-objects.ts), so that no
// read keeps the bytes of the one before (11 MB at 10k services x 5 endpoints). The scan hashes each
// item while its bytes are in its window (json-list.ts). The same hashes, with the List's head, name
// the whole file's content for a watching source (it is not parsed again while they stay): hashing
// the 11 MB again for that, as SHA-1 of the file, took about 13 ms of every re-read.
//
// XXH64 through xxhash-wasm, a small, dependency-free build of the reference implementation: node's
// crypto hashes one item per call, and its per-call cost made 20k items cost 30-60 ms a read, where
// the whole 11 MB List hashes in 5-7 ms here. A change that keeps an item's hash is a 2^-64 chance
// per changed item: a List rewritten five times a second with 50 items changed meets one in about
// two billion years.
//
// Loaded by a watching source only: a proxy that reads its manifests once (`proxy --once`, render)
// never compiles the module.

import type { XXHashAPI } from 'xxhash-wasm';

/** A 64-bit hash of bytes. */
export type ItemHasher = (bytes: Uint8Array) => bigint;

export interface ListHasher {
  /** An item's bytes hashed. */
  item: ItemHasher;
  /** A whole List hashed: its head (the List without its items) and its items' hashes, in order. */
  list(head: string, items: BigUint64Array): bigint;
}

let loading: Promise<ListHasher> | undefined;

/** The hasher (the module compiled on the first call). */
export function listHasher(): Promise<ListHasher> {
  loading ??= import('xxhash-wasm').then(async ({ default: xxhash }) => {
    const api: XXHashAPI = await xxhash();
    return {
      item: (bytes) => api.h64Raw(bytes),
      // The head's length first: no other head and hashes make the same input.
      list: (head, items) =>
        api
          .create64()
          .update(`${head.length}:${head}`)
          .update(new Uint8Array(items.buffer, items.byteOffset, items.byteLength))
          .digest(),
    };
  });
  return loading;
}
