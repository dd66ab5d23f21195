// A manifest file's bytes, all at once: a first read of any file, and every read of YAML or of JSON
// that is not a List (a watching source reads a JSON List again through a window: file-window.ts).
// Each buffer is freed as soon as its file is parsed (releaseFileBytes), not when a collection gets
// to it: a file rewritten a few times a second is read as often, and several such buffers were
// alive at any time under churn.
//
// Every buffer is allocated here, unpooled (fs.readFile may assemble a small file in Node's shared
// pool, which must never be detached).

import { open } from 'node:fs/promises';

/** ES2024's ArrayBuffer.prototype.transfer (Node 20+), which the ES2023 lib the project builds with leaves out. */
type DetachableArrayBuffer = ArrayBuffer & { transfer(newLength?: number): ArrayBuffer };

/**
 * Frees a buffer readFileBytes returned, at once (its views become empty). Garbage as it may be, a
 * buffer that survived the read's scavenges is freed only with its Buffer object, at a major
 * collection. transfer(0) detaches it and gives its memory back there and then.
 */
export function releaseFileBytes(buffer: Buffer): void {
  (buffer.buffer as DetachableArrayBuffer).transfer(0);
}

/** Where a read checks that a full buffer holds the whole file. */
const PROBE = Buffer.alloc(1);

/** The file's bytes, in a buffer of their own. */
export async function readFileBytes(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    let buffer = Buffer.allocUnsafeSlow((await handle.stat()).size);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const { bytesRead } = await handle.read(PROBE, 0, 1, length);
        if (bytesRead === 0) return buffer;
        // It grew since the stat: a buffer of what it is now.
        const { size } = await handle.stat();
        const grown = Buffer.allocUnsafeSlow(Math.max(size, length + 1));
        grown.set(buffer.subarray(0, length));
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) return buffer.subarray(0, length);
      length += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
