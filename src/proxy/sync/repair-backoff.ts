// How soon the proxy repairs an outside change to its tables. At once (a short debounce gathers
// the transactions of one script), but not forever: another writer that keeps undoing the proxy's
// rules would otherwise have the two fight at full speed. After a few repairs in a short window
// the delay doubles with each repair up to a minute, and goes back to immediate only once a
// window has passed after a repair without another change. Measured from the repair, not from
// the change before it: a writer that undoes each repair right away keeps the delay at its cap
// however long the delay is (a minute is longer than the window).

/** Gathers the transactions of one burst (a script's several nft commands). */
export const REPAIR_DEBOUNCE_MS = 10;
/** Repairs allowed within REPAIR_WINDOW_MS before backing off. */
export const FREE_REPAIRS = 5;
export const REPAIR_WINDOW_MS = 10_000;
export const MIN_BACKOFF_MS = 1000;
export const MAX_BACKOFF_MS = 60_000;

export class RepairBackoff {
  private recent: number[] = [];
  private delayMs = 0;
  /** When the last repair was due (the change that asked for it, plus its delay). */
  private due = -Infinity;

  /** A repair is due (an outside change seen at `now`): how long to wait before it. */
  next(now: number): number {
    // The other writer left the last repair alone for a whole window: the fight is over.
    if (this.delayMs > 0 && now - this.due >= REPAIR_WINDOW_MS) {
      this.delayMs = 0;
      this.recent = [];
    }
    if (this.delayMs === 0) {
      this.recent = this.recent.filter((t) => now - t < REPAIR_WINDOW_MS);
      this.recent.push(now);
      if (this.recent.length <= FREE_REPAIRS) {
        this.due = now + REPAIR_DEBOUNCE_MS;
        return REPAIR_DEBOUNCE_MS;
      }
    }
    this.delayMs = Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, this.delayMs * 2));
    this.due = now + this.delayMs;
    return this.delayMs;
  }

  /** Whether repairs are being held back (another writer keeps changing the tables). */
  get backingOff(): boolean {
    return this.delayMs > 0;
  }
}
