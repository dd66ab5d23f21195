// The measurement: with every (shape, size) loaded in its own host at once, rounds of sequential
// connects in which the hosts take turns every few connects (--turn; one probe process enters each
// host's client namespace in turn, outside the timed part), so every host sees the machine's
// moment alike: measured in bursts of 100 connects per host, identical hosts' p50s differed by up
// to 35% on this VM. Two kinds of target, alternating, the same sequence for every shape:
//   spread: service (k * stride) mod N for k = 0, 1, 2, ...: every position in the table in turn
//           (in KUBE-SERVICES, the average connect passes half of the rules);
//   last:   the last service, which iptables matches only after every other service's rule.

import { SERVICE_PORT, clusterIP } from './services.js';
import { runConnects, runDials, type Dial, type ProbeBinary } from './probe.js';
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
  /** Connects per target kind in a row from one host before the next host's turn. */
  turn: number;
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
    const dials: Dial[] = [];
    const owner: { host: number; kind: 'spread' | 'last' }[] = [];
    for (let k = 0, t = 0; k < count; k += o.turn, t++) {
      // A different host first each turn, so no host always follows the same one.
      for (let j = 0; j < hosts.length; j++) {
        const i = (j + t + r) % hosts.length;
        const h = hosts[i]!;
        const netns = h.cluster.client.name;
        for (const target of spreadTargets(h.services, done + k, Math.min(o.turn, count - k))) {
          dials.push({ netns, target }, { netns, target: lastTarget(h.services) });
          owner.push({ host: i, kind: 'spread' }, { host: i, kind: 'last' });
        }
      }
    }
    const run = await runDials(bin, dials, PROCESS_WARMUP);
    run.micros.forEach((us, k) => {
      if (!Number.isNaN(us)) out[owner[k]!.host]![owner[k]!.kind].push(us);
    });
    run.failedAt.forEach((k, n) => out[owner[k]!.host]!.errors.push(run.errors[n]!));
    done += count;
    progress(`  round ${r + 1}/${o.rounds}: ${done} connects per host and target kind`);
  }
  return out;
}
