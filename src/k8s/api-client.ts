// The two API calls a list+watch needs, over node:http(s) with the connection's keepalive agent:
// a JSON GET (list pages) and a watch stream (newline-delimited JSON events over a chunked
// response). Kept to these two so the reflector's error handling sees every failure as one of
// ApiStatusError (the server answered with an error status) or a network error.

import type { IncomingMessage } from 'node:http';
import type { ApiConnection } from './kubeconfig.js';
import { http, https } from '../on-demand.js';

const USER_AGENT = 'nftlink-proxy (kube-proxy compatible)';

/** The API server answered with an error: its status code and, when it sent one, its Status reason. */
export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A watch event as the API server streams it. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

export interface RequestLimits {
  signal: AbortSignal;
  /** Abort when no byte arrives for this long (a dead connection, or a hung server). */
  idleTimeoutMs: number;
}

export class ApiClient {
  constructor(private readonly conn: ApiConnection) {}

  get server(): string {
    return this.conn.server;
  }

  /** GET a JSON document. */
  async getJson(pathAndQuery: string, limits: RequestLimits): Promise<Record<string, unknown>> {
    const res = await this.send(pathAndQuery, limits);
    const body = await readBody(res);
    if (res.statusCode !== 200) throw statusError(res.statusCode ?? 0, body, pathAndQuery);
    try {
      return JSON.parse(body) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`GET ${pathAndQuery}: response is not JSON: ${(err as Error).message}`);
    }
  }

  /**
   * Streams a watch: calls onEvent for each event; resolves when the server ends the response
   * (its timeoutSeconds ran out), rejects when the connection breaks or the server refuses.
   */
  async watch(pathAndQuery: string, limits: RequestLimits, onEvent: (e: WatchEvent) => void): Promise<void> {
    const res = await this.send(pathAndQuery, limits);
    if (res.statusCode !== 200) throw statusError(res.statusCode ?? 0, await readBody(res), pathAndQuery);
    await new Promise<void>((resolve, reject) => {
      // The pieces of the line not yet ended. Only each new chunk is searched for the newline and a
      // line is joined once, when it ends: searching and growing one string per chunk makes an
      // event of n bytes cost n squared, and one large object would hold up every event after it.
      let pending: string[] = [];
      let failed = false;
      const fail = (err: Error): void => {
        if (failed) return;
        failed = true;
        res.destroy();
        reject(err);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        let start = 0;
        let nl: number;
        while ((nl = chunk.indexOf('\n', start)) >= 0) {
          const piece = chunk.slice(start, nl);
          const line = (pending.length ? pending.join('') + piece : piece).trim();
          pending = [];
          start = nl + 1;
          if (!line) continue;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch (err) {
            return fail(new Error(`watch ${pathAndQuery}: event is not JSON: ${(err as Error).message}`));
          }
          try {
            onEvent(event);
          } catch (err) {
            return fail(err as Error);
          }
        }
        if (start < chunk.length) pending.push(chunk.slice(start));
      });
      res.on('error', (err) => fail(err));
      res.on('close', () => {
        if (failed) return;
        // A complete response is the server closing the watch (timeoutSeconds); anything else is a drop.
        if (res.complete) resolve();
        else fail(new Error(`watch ${pathAndQuery}: connection closed mid-stream`));
      });
    });
  }

  private async send(pathAndQuery: string, limits: RequestLimits): Promise<IncomingMessage> {
    const headers = { ...(await this.conn.headers()), Accept: 'application/json', 'User-Agent': USER_AGENT };
    const url = new URL(pathAndQuery, `${this.conn.server}/`);
    const request = url.protocol === 'https:' ? https().request : http().request;
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'GET', headers, agent: this.conn.agent, signal: limits.signal });
      req.setTimeout(limits.idleTimeoutMs, () => {
        req.destroy(new Error(`GET ${pathAndQuery}: nothing received for ${Math.round(limits.idleTimeoutMs / 1000)}s`));
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end();
    });
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    res.on('end', () => resolve(body));
    res.on('error', reject);
  });
}

/** The Status the API server sends with an error, as an ApiStatusError. */
export function statusError(code: number, body: string, what: string): ApiStatusError {
  let reason = '';
  let message = body.slice(0, 200);
  try {
    const status = JSON.parse(body) as { reason?: string; message?: string };
    reason = status.reason ?? '';
    message = status.message ?? message;
  } catch {
    // not a Status: keep the start of the body
  }
  return new ApiStatusError(code, reason, `GET ${what}: ${code}${reason ? ` ${reason}` : ''}: ${message}`);
}
