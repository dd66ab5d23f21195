import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthzServer } from '../../src/server/healthz.js';
import { MAX_DISCARDED_BODY_BYTES } from '../../src/server/request-body.js';

let server: HealthzServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Sends `head` then `bodyBytes` bytes (1 kB writes, stopping when the server closes); what came back and how much was written. */
function send(port: number, head: string, bodyBytes: number): Promise<{ answer: string; written: number }> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    let answer = '';
    let written = 0;
    s.on('data', (d) => (answer += d.toString()));
    s.on('error', () => undefined);
    s.on('close', () => resolve({ answer, written }));
    s.on('connect', () => {
      s.write(head);
      const more = (): void => {
        while (written < bodyBytes && s.writable) {
          written += 1024;
          if (!s.write(Buffer.alloc(1024, 120))) return void s.once('drain', more);
        }
        if (written >= bodyBytes) s.end();
      };
      more();
    });
  });
}

describe('request bodies on the health server', () => {
  it('answers a request with a small body, and closes a connection whose body passes the bound', async () => {
    server = new HealthzServer({ address: '127.0.0.1:0', syncPeriodMs: 30_000, state: () => ({ lastSyncAt: undefined, oldestQueuedAt: undefined, nodeBeingDeleted: false }) });
    const { port } = await server.start();
    const small = await send(port, 'POST /livez HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n\r\n', 1024);
    expect(small.answer).toMatch(/^HTTP\/1\.1 200 OK/);
    const huge = 256 * 2 ** 20;
    const big = await send(port, `POST /livez HTTP/1.1\r\nHost: x\r\nContent-Length: ${huge}\r\n\r\n`, huge);
    expect(big.written).toBeGreaterThan(MAX_DISCARDED_BODY_BYTES);
    expect(big.written).toBeLessThan(huge);
  });
});
