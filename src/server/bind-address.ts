// host:port bind addresses as kube-proxy's --healthz-bind-address and --metrics-bind-address take
// them ("0.0.0.0:10256", "[::]:10249", "127.0.0.1:0"), and listening on one.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BindAddress {
  /** The host without brackets: an IP, or '' for every address. */
  host: string;
  port: number;
}

/** Splits "host:port" (IPv6 in brackets); `what` names the setting in the error. */
export function parseBindAddress(text: string, what: string): BindAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`${what}: "${text}" is not host:port (like 0.0.0.0:10256 or [::]:10256)`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/** Starts `server` on the address; resolves with the bound address (the real port for port 0). */
export function listen(server: Server, address: BindAddress, what: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new Error(`${what}: cannot listen on ${formatBindAddress(address)}: ${err.message}`));
    server.once('error', onError);
    // An empty host listens on every address of both families, like Go's ":port".
    server.listen({ port: address.port, ...(address.host ? { host: address.host } : {}) }, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Stops accepting and closes idle keep-alive connections, so a stop does not wait for clients. */
export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export function formatBindAddress(address: BindAddress): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
