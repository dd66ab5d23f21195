// A file's bytes as the JSON List reader (json-list.ts) sees them: the whole file in memory, or a
// small window over the open file. A watching source reads a List it has read before through a
// window: it scans the file through it and then reads each item it parses through it, so that the
// read holds a few tens of KB of the file at any time. A List of 10k services is 11 MB, and a
// proxy whose List kept changing used to keep one buffer of that size for the next read to read
// into: resident memory for as long as the file kept changing (110 MB at 100k). A first read takes
// the whole file at once, in one asynchronous read, and frees it when it is parsed (file-bytes.ts):
// its 11 MB live for a moment only, and as external memory they bring V8's first major collection
// forward, which a restart's peak depends on (docs/decisions.md).
//
// A window's reads are synchronous and positional, from the page cache in practice: they are made
// while a List's items are iterated, which is synchronous, and an item's text has to be there when
// asked. The window moves forward as the scan does and grows for a value larger than it (never past
// the file), so any value the scan needs whole is in the window when it asks.
//
// The file is open from the scan until its items are read: a writer that renames a new version
// over it leaves this read on the old one, whole. A writer that rewrites it in place can make the
// items read differ from the ones scanned: the read then fails (the item does not parse, or is cut
// short) or gives a mix that the next read, which that write's stat change causes, puts right; a
// read of the whole file at once could be torn by such a writer the same way.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The window's usual size: an item of a List is about 1 KB; reads of this size cost little per byte. */
export const WINDOW_BYTES = 64 * 1024;

/** Thrown when the file ends before what its scan found in it: it changed while it was read. */
export class FileChangedError extends Error {}

export class FileWindow {
  private buffer: Buffer;
  /** The window holds the file's bytes [start, end), at buffer[0, end - start). */
  private start = 0;
  private end: number;

  private constructor(
    /** The file's size (when it was opened). */
    readonly size: number,
    private readonly fd: number | undefined,
    buffer: Buffer,
  ) {
    this.buffer = buffer;
    this.end = fd === undefined ? size : 0;
  }

  /** A file's bytes, all in memory (the caller frees them). */
  static of(bytes: Buffer): FileWindow {
    return new FileWindow(bytes.length, undefined, bytes);
  }

  /** A window of `windowBytes` over the file, open until close(). */
  static open(file: string, windowBytes = WINDOW_BYTES): FileWindow {
    const fd = openSync(file, 'r');
    try {
      const { size } = fstatSync(fd);
      return new FileWindow(size, fd, Buffer.allocUnsafeSlow(Math.max(1, Math.min(windowBytes, size))));
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** The byte at `offset` (< size), the window moved to it if needed. */
  byte(offset: number): number {
    if (offset < this.start || offset >= this.end) this.fill(offset, 1);
    return this.buffer[offset - this.start]!;
  }

  /**
   * The window's bytes and where they start in the file, moved first so that they start at or before
   * `offset` and hold at least `length` bytes from it (fewer only at the end of the file).
   */
  at(offset: number, length: number): { bytes: Buffer; start: number; end: number } {
    const want = Math.min(offset + length, this.size);
    if (offset < this.start || want > this.end) this.fill(offset, want - offset);
    return { bytes: this.buffer, start: this.start, end: this.end };
  }

  /** The bytes [start, end) (a view of the window: valid until the window moves). */
  bytes(start: number, end: number): Buffer {
    const { start: at } = this.at(start, end - start);
    return this.buffer.subarray(start - at, end - at);
  }

  /** How many bytes the window holds at most now (it grows only for a value larger than it). */
  get capacity(): number {
    return this.buffer.length;
  }

  /** Closes the file (a window over one). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }

  /** Reads [offset, offset + max(length, the window's size)) into the window, growing it for `length`. */
  private fill(offset: number, length: number): void {
    // In memory, the window is the whole file: the scan never asks for more.
    if (this.fd === undefined) throw new RangeError(`bytes past the end of the file (${offset}, ${this.size} bytes)`);
    if (length > this.buffer.length) this.buffer = Buffer.allocUnsafeSlow(Math.min(this.size - offset, Math.max(length, 2 * this.buffer.length)));
    const want = Math.min(this.buffer.length, this.size - offset);
    let got = 0;
    while (got < want) {
      const n = readSync(this.fd, this.buffer, got, want - got, offset + got);
      if (n === 0) throw new FileChangedError(`the file became shorter while it was read (nothing at byte ${offset + got} of the ${this.size} it had)`);
      got += n;
    }
    this.start = offset;
    this.end = offset + want;
  }
}
