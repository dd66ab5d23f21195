// What one tamper repetition measured, from the probe's attempts and the proxy's log lines. Pure, so
// the definitions (what counts as "traffic works again") are unit-tested apart from any kernel.

/** One connection attempt of the probe loop: when it started and ended (epoch ms), and whether it connected. */
export interface Attempt {
  target: string;
  start: number;
  end: number;
  ok: boolean;
  /** The client's source port, when the socket got one. */
  port?: number;
  /** Why it failed: an errno code (ECONNREFUSED: a reject rule) or 'timeout' (the SYN went unanswered). */
  why?: string;
}

export interface RepOutcome {
  /** Attempts started after the command was run that failed. */
  failed: number;
  /**
   * From the command's return to the first successful connection started after the last failed
   * one, over all targets; undefined when no attempt failed (the change did not break traffic).
   */
  trafficMs?: number;
  /** From the command's return to the proxy's repair sync after it (logged once committed); undefined if none came. */
  repairMs?: number;
  /** That sync, as the proxy logged it: full or targeted, its operations and its own duration. */
  repairSync?: { full: boolean; operations: number; durationMs: number };
  /** The failed attempts (ms from the command's return to their start, and how long they took), to tell a repair gap from a stray failure. */
  failures?: { target: string; atMs: number; tookMs: number; port?: number; why?: string; unNATted?: boolean }[];
  /** The proxy's log messages in the repetition, ms from the command's return. */
  log?: { atMs: number; msg: string; family?: string; full?: boolean }[];
}

/**
 * Traffic recovery: a change that breaks only some connections (one of two endpoints gone) still
 * lets others succeed at once, so "the first success after the command" would say nothing; the
 * first success after the last failure is when traffic works again for every connection.
 */
export function trafficRecovery(attempts: readonly Attempt[], cmdStart: number, cmdReturn: number): { failed: number; trafficMs?: number } {
  const after = attempts.filter((a) => a.start >= cmdStart);
  const failures = after.filter((a) => !a.ok);
  if (failures.length === 0) return { failed: 0 };
  let recovered = -Infinity;
  for (const target of new Set(after.map((a) => a.target))) {
    const mine = after.filter((a) => a.target === target);
    const lastFail = Math.max(...mine.filter((a) => !a.ok).map((a) => a.start));
    if (lastFail === -Infinity) continue;
    // Started after the last failure and after the command returned: an attempt in flight across
    // the return was sent before anyone could have repaired anything.
    const ok = mine.filter((a) => a.ok && a.start > lastFail && a.start >= cmdReturn).map((a) => a.end);
    // Never recovered within the window: the whole window is the figure (a miss, not a hole).
    const first = ok.length ? Math.min(...ok) : Infinity;
    recovered = Math.max(recovered, first);
  }
  return { failed: failures.length, trafficMs: recovered - cmdReturn };
}

export interface SyncLine {
  /** Epoch ms of the log line. */
  time: number;
  family: string;
  full: boolean;
  /** A targeted repair (the sync read back only what the outside change touched). */
  repaired: boolean;
  operations: number;
  durationMs: number;
}

/**
 * The proxy's repair: its first full or targeted-repair sync of the IPv4 table (the one tampered
 * with) logged after the command started. Full syncs also come with the periodic resync, but not
 * within the seconds a repetition lasts with the default --sync-period.
 */
export function repairSync(lines: readonly SyncLine[], cmdStart: number): SyncLine | undefined {
  return lines.find((l) => (l.full || l.repaired) && l.family === 'ip' && l.time >= cmdStart);
}

export function repairTime(lines: readonly SyncLine[], cmdStart: number, cmdReturn: number): number | undefined {
  const sync = repairSync(lines, cmdStart);
  return sync ? sync.time - cmdReturn : undefined;
}

/** The figure a repetition is judged by: traffic when the change broke it, else the repair commit. */
export function judgedMs(o: RepOutcome): number | undefined {
  return o.failed > 0 ? o.trafficMs : o.repairMs;
}

/**
 * Source ports of the node's conntrack entries for `vip` that were never DNATed (their reply comes
 * from the ClusterIP itself): SYNs that arrived while the rules were gone. A later connection from
 * the same client port matches such an entry and is not NATed either, whatever the rules say.
 */
export function unNATtedPorts(conntrackList: string, vip: string): Set<number> {
  const out = new Set<number>();
  for (const line of conntrackList.split('\n')) {
    const src = [...line.matchAll(/src=(\S+)/g)].map((m) => m[1]);
    const sport = /sport=(\d+)/.exec(line)?.[1];
    if (src[1] === vip && sport) out.add(Number(sport));
  }
  return out;
}
