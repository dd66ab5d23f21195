// kube-proxy's BoundedFrequencyRunner: run a function when asked, but never more often than once per
// `minInterval` (changes arriving meanwhile are batched into the next run), and at least once per
// `maxInterval` (the periodic full resync). Runs never overlap.

export interface RunnerOptions {
  minIntervalMs: number;
  maxIntervalMs: number;
}

export class BoundedFrequencyRunner {
  private timer: NodeJS.Timeout | undefined;
  private lastRun = 0;
  private running: Promise<void> | undefined;
  private requested = false;
  private stopped = false;

  constructor(
    private readonly fn: () => Promise<void>,
    private readonly opts: RunnerOptions,
  ) {}

  /** Starts the periodic runs (the first one happens on the first request, or after maxInterval). */
  start(): void {
    this.stopped = false;
    this.schedule(this.opts.maxIntervalMs);
  }

  /** Asks for a run as soon as minInterval allows. */
  run(): void {
    if (this.stopped) return;
    this.requested = true;
    if (this.running) return; // the loop re-checks `requested` when the current run ends
    const wait = Math.max(0, this.lastRun + this.opts.minIntervalMs - Date.now());
    this.schedule(wait);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.running || this.stopped) return;
    this.requested = false;
    this.lastRun = Date.now();
    this.running = this.fn().catch(() => undefined);
    await this.running;
    this.running = undefined;
    if (this.stopped) return;
    if (this.requested) this.schedule(Math.max(0, this.lastRun + this.opts.minIntervalMs - Date.now()));
    else this.schedule(this.opts.maxIntervalMs);
  }

  /** Waits for a run in progress. */
  async idle(): Promise<void> {
    await this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
