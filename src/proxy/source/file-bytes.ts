// A manifest file's bytes, read into a buffer the caller no longer needs when they fit in it. A
// file rewritten a few times a second is read as often: a new buffer per read (11 MB at 10k
// services) is external memory that only the collection of its Buffer object gives back, and
// several of them were alive at any time under such churn. The manifest reader keeps a changing
// file's buffer with what its items gave (manifests.ts, ListMemo, which compares items by hash and
// needs none of the bytes), and hands it back here: each read reads into the one before's.
//
// Every buffer is allocated here, unpooled (fs.readFile may assemble a small file in Node's shared
// pool, which must never be written into as a spare).

import { open } from 'node:fs/promises';

/** A file's bytes, and the allocation they are the start of (to hand back as a spare). */
export interface FileBytes {
  bytes: Buffer;
  buffer: Buffer;
}

/** ES2024's ArrayBuffer.prototype.transfer (Node 20+), which the ES2023 lib the project builds with leaves out. */
type DetachableArrayBuffer = ArrayBuffer & { transfer(newLength?: number): ArrayBuffer };

/**
 * Frees a buffer this module returned, at once (its views become empty). Garbage as it may be, a
 * buffer that survived the read's scavenges is freed only with its Buffer object, at a major
 * collection: on a cold start that came after the first sync, and the 11 MB of a 10k-service List
 * stayed in the process's peak. transfer(0) detaches it and gives its memory back there and then.
 */
export function releaseFileBytes(buffer: Buffer): void {
  (buffer.buffer as DetachableArrayBuffer).transfer(0);
}

/** Where a read checks that a full buffer holds the whole file. */
const PROBE = Buffer.alloc(1);

/** The file's bytes: in `spare` (a buffer an earlier call returned) when they fit in it. */
export async function readFileBytes(file: string, spare?: Buffer): Promise<FileBytes> {
  const handle = await open(file, 'r');
  try {
    let buffer = spare ?? Buffer.allocUnsafeSlow((await handle.stat()).size);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const { bytesRead } = await handle.read(PROBE, 0, 1, length);
        if (bytesRead === 0) return { bytes: buffer, buffer };
        // It outgrew the buffer: one with room to grow in (a churned file changes size by a few bytes).
        const { size } = await handle.stat();
        const grown = Buffer.allocUnsafeSlow(Math.max(size, length + 1) + (size >> 4));
        grown.set(buffer.subarray(0, length));
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) return { bytes: buffer.subarray(0, length), buffer };
      length += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
