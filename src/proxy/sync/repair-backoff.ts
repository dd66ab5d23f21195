// How soon the proxy repairs an outside change to its tables. At once (a short debounce gathers
// the transactions of one script), but not forever: another writer that keeps undoing the proxy's
// rules would otherwise have the two fight at full speed. After a few repairs in a short window
// the delay doubles with each repair up to a minute, and goes back to immediate once the window
// has passed without one.

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

  /** A repair is due (an outside change seen at `now`): how long to wait before it. */
  next(now: number): number {
    this.recent = this.recent.filter((t) => now - t < REPAIR_WINDOW_MS);
    this.recent.push(now);
    if (this.recent.length <= FREE_REPAIRS) {
      this.delayMs = 0;
      return REPAIR_DEBOUNCE_MS;
    }
    this.delayMs = Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, this.delayMs * 2));
    return this.delayMs;
  }

  /** Whether repairs are being held back (another writer keeps changing the tables). */
  get backingOff(): boolean {
    return this.delayMs > 0;
  }
}
