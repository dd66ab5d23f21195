// Exponential backoff between failed list/watch attempts, as client-go's reflector has it
// (NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)): the delay doubles per failure up to
// a cap, with up to 100% random jitter so that every node's proxy does not hit a recovering API
// server at the same instant, and starts over once things have worked for a while.

export interface BackoffOptions {
  /** First delay (default 800 ms). */
  initialMs?: number;
  /** Cap (default 30 s). */
  maxMs?: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Up to this fraction added at random (default 1.0: between d and 2d, still capped). */
  jitter?: number;
  /** A failure this long after the previous one starts from initialMs again (default 2 min). */
  resetAfterMs?: number;
  now?: () => number;
  random?: () => number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private current: number;
  private lastFailureAt: number | undefined;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 800;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 1;
    this.resetAfterMs = opts.resetAfterMs ?? 120_000;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.current = this.initialMs;
  }

  /** The delay before the next attempt after a failure now. */
  next(): number {
    const now = this.now();
    if (this.lastFailureAt !== undefined && now - this.lastFailureAt >= this.resetAfterMs) this.current = this.initialMs;
    this.lastFailureAt = now;
    const delay = Math.min(this.maxMs, this.current * (1 + this.jitter * this.random()));
    this.current = Math.min(this.maxMs, this.current * this.factor);
    return delay;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
