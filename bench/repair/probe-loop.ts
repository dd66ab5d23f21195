// The client side of a repetition: a child process in the client namespace that opens a new TCP
// connection to each target every few ms, overlapping (a connection whose SYN was dropped must not
// hold back the next attempt, or the resolution would be the timeout), for a fixed time. Each
// attempt is one line: target, start and end (epoch ms, sub-ms), whether it connected, its source
// port (0 if it never had one) and why it failed (an error code or timeout), to match a failure with the node's conntrack entries.

import type { Netns } from '../../src/netns/netns.js';
import { startScript } from '../script-child.js';
import type { Attempt } from './recovery.js';

const LOOP = `
const net = require('net');
const [targets, intervalMs, durationMs, timeoutMs] = [process.argv[1].split(','), Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
const now = () => performance.timeOrigin + performance.now();
const lines = [];
const attempt = (t) => {
  const [host, port] = [t.slice(0, t.lastIndexOf(':')), Number(t.slice(t.lastIndexOf(':') + 1))];
  const start = now();
  let done = false;
  const s = net.connect({ host, port });
  const finish = (ok, why) => { if (done) return; done = true; clearTimeout(timer); const local = s.localPort || 0; s.destroy(); lines.push(t + ' ' + start.toFixed(2) + ' ' + now().toFixed(2) + ' ' + (ok ? 1 : 0) + ' ' + local + ' ' + why); };
  const timer = setTimeout(() => finish(false, 'timeout'), timeoutMs);
  s.once('connect', () => finish(true, 'ok'));
  s.once('error', (e) => finish(false, e.code || 'error'));
};
console.log('ready');
const tick = setInterval(() => { for (const t of targets) attempt(t); }, intervalMs);
setTimeout(() => { clearInterval(tick); setTimeout(() => process.stdout.write(lines.join('\\n') + '\\n'), timeoutMs + 50); }, durationMs);
`;

export interface ProbeRun {
  /** Resolves once the loop runs (attempts have started). */
  started: Promise<void>;
  /** Resolves with every attempt once the loop is over. */
  attempts: Promise<Attempt[]>;
}

export function parseAttempts(text: string): Attempt[] {
  const out: Attempt[] = [];
  for (const line of text.split('\n')) {
    const [target, start, end, ok, port, why] = line.trim().split(' ');
    if (target && target !== 'ready' && end !== undefined)
      out.push({ target, start: Number(start), end: Number(end), ok: ok === '1', ...(port && port !== '0' ? { port: Number(port) } : {}), ...(why && why !== 'ok' ? { why } : {}) });
  }
  return out;
}

/** `targets` as host:port; runs for `durationMs`, an attempt failing after `timeoutMs`. */
export function startProbeLoop(ns: Netns, targets: string[], intervalMs: number, durationMs: number, timeoutMs = 300): ProbeRun {
  const loop = startScript(ns, LOOP, [targets.join(','), String(intervalMs), String(durationMs), String(timeoutMs)], 'ready');
  // A loop that died before it ran is started too: the caller learns why from attempts.
  const attempts = loop.ended.then(({ code, stdout, stderr }) => {
    if (code !== 0) throw new Error(`bench: probe loop exited (${code}): ${stderr}`);
    return parseAttempts(stdout);
  });
  return { started: loop.ready, attempts };
}
