// The measurement: with every (shape, size) loaded in its own host at once, rounds of sequential
// connects from each host's client, the hosts in a different order every round, so slow phases of
// a noisy machine fall on all of them alike and every ratio compares figures taken side by side.
// Two kinds of target, alternating, the same sequence for every shape:
//   spread: service (k * stride) mod N for k = 0, 1, 2, ...: every position in the table in turn
//           (in KUBE-SERVICES, the average connect passes half of the rules);
//   last:   the last service, which iptables matches only after every other service's rule.

import { SERVICE_PORT, clusterIP } from './services.js';
import { runConnects, type ProbeBinary } from './probe.js';
import type { Host } from './topology.js';

export interface Samples {
  /** Connect times, µs. */
  spread: number[];
  last: number[];
  /** Failed connects (errno), which have no time. */
  errors: number[];
}

/** Untimed connects at the start of every client process (its first connects pay for page faults). */
const PROCESS_WARMUP = 5;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** A prime stride that visits every one of n services before repeating. */
function strideFor(n: number): number {
  return [7919, 7907].find((p) => gcd(p, n) === 1)!;
}

export function spreadTargets(services: number, from: number, count: number): string[] {
  const stride = strideFor(services);
  const out: string[] = [];
  for (let k = from; k < from + count; k++) out.push(`${clusterIP((k * stride) % services)}:${SERVICE_PORT}`);
  return out;
}

export function lastTarget(services: number): string {
  return `${clusterIP(services - 1)}:${SERVICE_PORT}`;
}

export interface MeasureOptions {
  connects: number;
  rounds: number;
  warmup: number;
}

export type Progress = (line: string) => void;

/** Samples per host, in the order of `hosts`. */
export async function measure(hosts: readonly Host[], o: MeasureOptions, bin: ProbeBinary, progress: Progress): Promise<Samples[]> {
  const out: Samples[] = hosts.map(() => ({ spread: [], last: [], errors: [] }));
  for (const h of hosts) {
    if (o.warmup === 0) continue;
    // Spread like the timed connects (their first targets): ARP, routes, conntrack and the table warm.
    const w = await runConnects(bin, h.cluster.client.name, spreadTargets(h.services, 0, o.warmup), PROCESS_WARMUP);
    if (w.errors.length) throw new Error(`bench: ${w.errors.length} of ${o.warmup} warm-up connects through ${h.shape} with ${h.services} services failed (errno ${[...new Set(w.errors)].join(', ')}): its ruleset does not forward`);
  }
  let done = 0;
  for (let r = 0; r < o.rounds; r++) {
    const count = Math.floor(o.connects / o.rounds) + (r < o.connects % o.rounds ? 1 : 0);
    // Round r starts at host r: over the rounds every host runs early, late and in between.
    for (let j = 0; j < hosts.length; j++) {
      const i = (j + r) % hosts.length;
      const h = hosts[i]!;
      // Spread and last alternate, so the two kinds share the moment's conditions too.
      const targets = spreadTargets(h.services, done, count).flatMap((t) => [t, lastTarget(h.services)]);
      const run = await runConnects(bin, h.cluster.client.name, targets, PROCESS_WARMUP);
      const s = out[i]!;
      run.micros.forEach((us, k) => {
        if (Number.isNaN(us)) return;
        (k % 2 === 0 ? s.spread : s.last).push(us);
      });
      s.errors.push(...run.errors);
    }
    done += count;
    progress(`  round ${r + 1}/${o.rounds}: ${done} connects per host and target kind`);
  }
  return out;
}
