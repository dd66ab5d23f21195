// The addon's end of a transaction built while it streams (Nftables.transaction()): each part the
// encoder finishes goes to the addon at once, which turns it into netlink messages on the libuv pool
// while JavaScript encodes the next; commit() then ends the stream and the batch goes out.

import type { NativeBinding, NativeCommitResult, NativeCommitStream, NativeHandle } from '../native/binding.js';
import type { RequestSink } from './netlink/encode.js';
import { WIRE_FLAG_GENID } from './netlink/wire-format.js';

export class NativeRequestSink implements RequestSink {
  /** Made by the first part: a transaction too small to feed any costs the addon nothing. */
  private stream: NativeCommitStream | undefined;

  /** `owner`: the connection that made it; a transaction committed elsewhere does not use it. */
  constructor(
    private readonly native: NativeBinding,
    private readonly handle: NativeHandle,
    readonly owner: object,
  ) {}

  feed(part: Uint8Array, operations: number): void {
    this.stream ??= this.native.commitStream(this.handle);
    this.native.commitStreamFeed(this.stream, part, operations);
  }

  cancel(): void {
    if (this.stream) this.native.commitStreamCancel(this.stream);
  }

  /** Sends the batch of everything fed, as commit() sends a whole request. */
  end(generation: number | undefined): Promise<NativeCommitResult> {
    if (!this.stream) return Promise.reject(new Error('nftlink: internal error: a streamed commit ended before its first part'));
    return generation === undefined
      ? this.native.commitStreamEnd(this.stream, 0, 0)
      : this.native.commitStreamEnd(this.stream, WIRE_FLAG_GENID, generation);
  }
}
