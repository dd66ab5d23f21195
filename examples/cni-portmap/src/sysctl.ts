// route_localnet: a connection from the host to 127.0.0.1:<hostPort> is DNATed to the container,
// and the kernel drops a packet with a 127.0.0.0/8 source on its way out of an interface unless
// route_localnet is set on it (the postrouting masquerade then gives it the host's address). As
// upstream does, the plugin sets it on the interface the route to the container's address leaves by.
// The sysctl tree under /proc/sys/net is the calling process's network namespace: the host's.

import { readFileSync, writeFileSync } from 'node:fs';
import { parseIPv4 } from 'nftlink';

/** The interface of the most specific IPv4 route to `address` in /proc/net/route, if any. */
export function routeInterface(address: string, table = readFileSync('/proc/net/route', 'utf8')): string | undefined {
  const target = ipv4Number(address);
  let best: { iface: string; len: number } | undefined;
  for (const line of table.split('\n').slice(1)) {
    const [iface, dest, , , , , , mask] = line.trim().split(/\s+/);
    if (!iface || !dest || !mask) continue;
    // The file prints addresses as the kernel holds them: network order read as a little-endian word.
    const d = Number.parseInt(dest, 16);
    const m = Number.parseInt(mask, 16);
    const len = popcount(m);
    if (((swap(d) & swap(m)) >>> 0) === ((target & swap(m)) >>> 0) && (!best || len > best.len)) best = { iface, len };
  }
  return best?.iface;
}

export function enableRouteLocalnet(iface: string): void {
  writeFileSync(`/proc/sys/net/ipv4/conf/${iface}/route_localnet`, '1');
}

function ipv4Number(address: string): number {
  const b = parseIPv4(address);
  if (!b) throw new RangeError(`${address} is not an IPv4 address`);
  return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
}

function swap(x: number): number {
  return (((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

function popcount(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v; v >>>= 1) n += v & 1;
  return n;
}
