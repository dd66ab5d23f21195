// The addon's end of a transaction built while it streams (Nftables.transaction()): each part the
// encoder finishes goes to the addon at once, which turns it into netlink messages on the libuv pool
// while JavaScript encodes the next; commit() then ends the stream and the batch goes out.

import type { NativeBinding, NativeCommitResult, NativeCommitStream, NativeHandle } from '../native/binding.js';
import type { RequestSink } from './netlink/encode.js';
import { WIRE_FLAG_GENID } from './netlink/wire.js';

export class NativeRequestSink implements RequestSink {
  private readonly stream: NativeCommitStream;

  /** `owner`: the connection that made it; a transaction committed elsewhere does not use it. */
  constructor(
    private readonly native: NativeBinding,
    handle: NativeHandle,
    readonly owner: object,
  ) {
    this.stream = native.commitStream(handle);
  }

  feed(part: Uint8Array, operations: number): void {
    this.native.commitStreamFeed(this.stream, part, operations);
  }

  cancel(): void {
    this.native.commitStreamCancel(this.stream);
  }

  /** Sends the batch of everything fed, as commit() sends a whole request. */
  end(generation: number | undefined): Promise<NativeCommitResult> {
    return generation === undefined
      ? this.native.commitStreamEnd(this.stream, 0, 0)
      : this.native.commitStreamEnd(this.stream, WIRE_FLAG_GENID, generation);
  }
}
