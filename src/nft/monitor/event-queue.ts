// The monitor's bounded buffer between the source (the addon's socket reads, or the fake's
// commits) and the consumer's `for await`: events wait here until asked for, and past `high`
// buffered changes the source is told to stop (and told to go on at half of it).

export interface QueueSource {
  pause(): void;
  resume(): void;
  /** The consumer is gone (return(), break, an error): release the socket. */
  close(): void;
}

export class EventQueue<T> {
  private readonly items: T[] = [];
  private head = 0;
  private buffered = 0;
  private paused = false;
  private ended = false;
  private error: unknown;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;

  constructor(
    private readonly source: QueueSource,
    private readonly high: number,
    private readonly weight: (item: T) => number,
  ) {}

  get closed(): boolean {
    return this.ended;
  }

  /** How many changes wait for the consumer. */
  get size(): number {
    return this.buffered;
  }

  push(item: T): void {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    this.buffered += this.weight(item);
    if (!this.paused && this.buffered >= this.high) {
      this.paused = true;
      this.source.pause();
    }
  }

  /** The source failed: what is buffered is still delivered, then next() rejects with `e`. */
  fail(e: unknown): void {
    if (this.ended) return;
    this.error = e;
    this.finish();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.items.length) {
      const item = this.items[this.head]!;
      this.items[this.head++] = undefined as T;
      if (this.head > 1024 && this.head * 2 > this.items.length) this.items.splice(0, this.head), (this.head = 0);
      this.buffered -= this.weight(item);
      if (this.paused && !this.ended && this.buffered <= this.high / 2) {
        this.paused = false;
        this.source.resume();
      }
      return Promise.resolve({ value: item, done: false });
    }
    if (this.error !== undefined) {
      const e = this.error;
      this.error = undefined;
      return Promise.reject(e);
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter) return Promise.reject(new Error('nftlink: monitor: next() called again before the previous call settled'));
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** Ends the subscription: nothing more is delivered, a pending next() resolves done. */
  close(): void {
    if (this.ended) return;
    this.items.length = 0;
    this.head = 0;
    this.buffered = 0;
    this.finish();
  }

  private finish(): void {
    this.ended = true;
    this.source.close();
    const w = this.waiter;
    this.waiter = undefined;
    if (!w) return;
    if (this.error !== undefined) {
      const e = this.error;
      this.error = undefined;
      w.reject(e);
    } else {
      w.resolve({ value: undefined, done: true });
    }
  }
}
