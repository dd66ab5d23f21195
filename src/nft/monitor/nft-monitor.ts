// The async iterable a monitor is: `for await (const ev of nft.monitor(opts))`. Leaving the loop
// (break, return, throw) calls return(), which ends the subscription and releases its socket.

import type { MonitorEvent } from './events.js';
import type { EventQueue } from './event-queue.js';

export class NftMonitor implements AsyncIterableIterator<MonitorEvent> {
  /**
   * `ready`: settles once the monitor can decode what it receives (the kernel's has read the sets
   * that exist); next() waits for it.
   */
  constructor(
    private readonly queue: EventQueue<MonitorEvent>,
    private readonly ready: Promise<void> = Promise.resolve(),
  ) {}

  async next(): Promise<IteratorResult<MonitorEvent>> {
    await this.ready;
    return this.queue.next();
  }

  async return(): Promise<IteratorResult<MonitorEvent>> {
    this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Ends the subscription (as leaving a `for await` loop does). Idempotent. */
  close(): void {
    this.queue.close();
  }

  /**
   * Resolves once the monitor has read the sets that exist. Not needed to see events: the
   * subscription is live when monitor() returns, and what is committed from then on is delivered.
   */
  async started(): Promise<void> {
    await this.ready;
  }

  /** Changes buffered, waiting for the consumer. */
  get buffered(): number {
    return this.queue.size;
  }
}
