// Neither server's endpoints take a request body. Node's HTTP server reads and discards a body the
// handler left unread, to keep the connection alive, for as long as the client sends it: a client
// could keep the proxy reading without end. So a body is read only up to a bound, as Go's net/http
// (kube-proxy's server) does with 256 KB, and a longer one closes the connection. (Closing at once
// instead would reset even a small body's connection before the client read the answer.)

import type { IncomingMessage } from 'node:http';

/** The most of a request body the servers read and discard before they close the connection. */
export const MAX_DISCARDED_BODY_BYTES = 256 * 1024;

/** Call on every request: its body is read and dropped, and the connection closed past the bound. */
export function boundBody(req: IncomingMessage): void {
  let read = 0;
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > MAX_DISCARDED_BODY_BYTES) req.socket.destroy();
  });
}
