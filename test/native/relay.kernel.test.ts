// The addon's splice relay (native/relay.cc) on its own, with real sockets inside a fresh network
// namespace (a child node process entered into it, so no traffic leaves namespaces the test made):
// both directions and half-close, byte counts, a refused dial, a dial that times out, a cancel, and
// bad arguments that throw instead of crashing. Nothing is left running afterwards.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { namespacesForFile } from '../helpers/netns.js';

const freshNetns = namespacesForFile(afterAll);
const binding = fileURLToPath(new URL('../../dist/native/binding.js', import.meta.url));

// Runs inside the namespace: 198.18.0.1 on lo, a listener the relay takes clients from, servers to
// dial. Prints one JSON object with what each case saw.
const SCENARIOS = `
const net = require('net');
(async () => {
  const { loadNative } = await import(${JSON.stringify(binding)});
  const native = loadNative();
  const HOST = '198.18.0.1';
  const listen = (handler, opts = {}) => new Promise((r) => { const s = net.createServer(opts, handler); s.listen(0, HOST, () => r(s)); });
  const read = (sock) => new Promise((r) => { const parts = []; sock.on('data', (d) => parts.push(d)); sock.on('end', () => r(Buffer.concat(parts).toString())); sock.on('error', (e) => r('error:' + e.code)); });
  // Accepts one client (paused, as the proxy's listener does) and hands it to relayDial.
  async function relayed(port, timeoutMs = 2000, host = HOST) {
    let relay;
    const front = await listen((c) => { relay = native.relayDial(c._handle.fd, host, port, timeoutMs); relay.client = c; }, { pauseOnConnect: true, allowHalfOpen: true });
    const client = net.connect({ host: HOST, port: front.address().port, allowHalfOpen: true });
    await new Promise((r) => client.once('connect', r));
    // Everything the client receives, from now on (an EOF may come before the relay's promise).
    const seen = read(client);
    while (!relay) await new Promise((r) => setTimeout(r, 5));
    return { client, relay, front, seen };
  }
  const out = {};

  // Half-close: the server answers only after the client's EOF, with what it counted.
  const counter = await listen((s) => { let n = 0; s.on('data', (d) => (n += d.length)); s.on('end', () => s.end('bye:' + n)); }, { allowHalfOpen: true });
  {
    const { client, relay, front, seen } = await relayed(counter.address().port);
    client.end(Buffer.alloc(3 << 20, 7));
    out.halfClose = { answer: await seen, result: await relay };
    relay.client.destroy(); front.close();
  }

  // Refused: nothing listens on that port.
  {
    const closed = await listen(() => {}); const port = closed.address().port; await new Promise((r) => closed.close(r));
    const { relay, front, seen } = await relayed(port);
    out.refused = { client: await seen, result: await relay };
    relay.client.destroy(); front.close();
  }

  // Timed out: SYNs to 198.18.0.9 are dropped by the namespace's ruleset.
  {
    const started = Date.now();
    const { relay, front, seen } = await relayed(9, 300, '198.18.0.9');
    const r = await relay;
    out.timedOut = { result: r, ms: Date.now() - started, client: await seen };
    relay.client.destroy(); front.close();
  }

  // Cancelled: a server that never answers.
  const silent = await listen(() => {});
  {
    const { relay, front, seen } = await relayed(silent.address().port);
    await new Promise((r) => setTimeout(r, 100));
    native.relayCancel(relay.relayId);
    out.cancelled = { result: await relay, client: await seen };
    relay.client.destroy(); front.close();
  }

  // Bad arguments throw; none crashes the process.
  out.badArgs = [];
  for (const args of [[], ['x', HOST, 80, 100], [-1, HOST, 80, 100], [3, 'not-an-address', 80, 100], [3, HOST, 0, 100], [3, HOST, 80, 0], [3, HOST, 80.5, 100]]) {
    try { native.relayDial(...args); out.badArgs.push('no error'); } catch (e) { out.badArgs.push(e.constructor.name); }
  }
  try { await native.relayDial(1 << 29, HOST, 80, 100); out.badFd = 'no error'; } catch (e) { out.badFd = e.message; }
  out.running = native.relayCount();
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe('native splice relay', () => {
  it('relays both ways with half-close, reports dial failures and timeouts, cancels, and refuses bad arguments', () => {
    const ns = freshNetns();
    ns.exec('ip', ['addr', 'add', '198.18.0.1/32', 'dev', 'lo']);
    ns.exec('ip', ['addr', 'add', '198.18.0.9/32', 'dev', 'lo']);
    ns.exec('nft', ['add table ip t; add chain ip t out { type filter hook output priority 0; }; add rule ip t out ip daddr 198.18.0.9 tcp flags syn drop']);
    const r = spawnSync('ip', ['netns', 'exec', ns.name, process.execPath, '-e', SCENARIOS], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);

    expect(out.halfClose.answer).toBe(`bye:${3 << 20}`);
    expect(out.halfClose.result).toEqual({ aToB: 3 << 20, bToA: `bye:${3 << 20}`.length, error: '' });

    expect(out.refused.result.error).toBe('dial: Connection refused');
    expect(out.refused.client).toMatch(/^(|error:ECONNRESET)$/);

    expect(out.timedOut.result.error).toBe('dial: timed out after 300 ms');
    expect(out.timedOut.ms).toBeGreaterThanOrEqual(300);
    expect(out.timedOut.ms).toBeLessThan(2000);

    expect(out.cancelled.result).toEqual({ aToB: 0, bToA: 0, error: 'cancelled' });

    expect(out.badArgs).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError', 'RangeError', 'RangeError', 'RangeError']);
    expect(out.badFd).toMatch(/relayDial\(\): cannot take the client socket/);
    expect(out.running).toBe(0);
  });
});
