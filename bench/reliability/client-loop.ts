// Clients of the scenarios: a child process in the client namespace that opens a new TCP
// connection to each target every few ms (overlapping: a SYN that goes unanswered does not hold
// back the next attempt) until it is told to stop (SIGTERM), then prints, per target, how many
// connected and how many failed, with the first failures (when, why). Counting instead of listing
// every attempt keeps a 30-minute soak's client small.

import type { Netns } from '../../src/netns/netns.js';
import { lastLine, startScript } from '../script-child.js';

const LOOP = `
const net = require('net');
const [targets, intervalMs, timeoutMs] = [process.argv[1].split(','), Number(process.argv[2]), Number(process.argv[3])];
const tally = Object.fromEntries(targets.map((t) => [t, { ok: 0, failed: 0, failures: [] }]));
let inFlight = 0;
const attempt = (t) => {
  const i = t.lastIndexOf(':');
  const start = Date.now();
  let done = false;
  inFlight++;
  const s = net.connect({ host: t.slice(0, i), port: Number(t.slice(i + 1)) });
  const finish = (ok, why) => {
    if (done) return;
    done = true;
    inFlight--;
    clearTimeout(timer);
    s.destroy();
    const r = tally[t];
    if (ok) r.ok++;
    else { r.failed++; if (r.failures.length < 50) r.failures.push({ at: start, why }); }
  };
  const timer = setTimeout(() => finish(false, 'timeout'), timeoutMs);
  s.once('connect', () => finish(true));
  s.once('error', (e) => finish(false, e.code || 'error'));
};
const tick = setInterval(() => targets.forEach(attempt), intervalMs);
console.log('ready');
process.on('SIGTERM', () => {
  clearInterval(tick);
  const end = () => (inFlight ? setTimeout(end, 20) : process.stdout.write(JSON.stringify(tally) + '\\n', () => process.exit(0)));
  end();
});
`;

export interface TargetTally {
  ok: number;
  failed: number;
  /** The first 50 failures: start (epoch ms) and why (an errno code or 'timeout'). */
  failures: { at: number; why: string }[];
}

export interface ClientLoop {
  /** Resolves once the loop runs. */
  started: Promise<void>;
  /** Stops it; resolves with the tally per target (host:port). */
  stop(): Promise<Record<string, TargetTally>>;
}

export function startClientLoop(ns: Netns, targets: readonly string[], intervalMs: number, timeoutMs = 1000): ClientLoop {
  const loop = startScript(ns, LOOP, [targets.join(','), String(intervalMs), String(timeoutMs)], 'ready');
  return {
    started: loop.ready,
    async stop() {
      loop.child.kill('SIGTERM');
      const { code, stdout, stderr } = await loop.ended;
      const last = lastLine(stdout);
      if (code !== 0 || !last.startsWith('{')) throw new Error(`reliability: client loop exited (${code}): ${stderr}`);
      return JSON.parse(last) as Record<string, TargetTally>;
    },
  };
}
