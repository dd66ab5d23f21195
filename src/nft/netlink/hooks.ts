// Hook numbers by family: the netdev family numbers its hooks apart (NF_NETDEV_INGRESS is 0, where
// NF_INET_PRE_ROUTING is), so a netdev ingress chain read as an inet hook would be prerouting.

import type { Family } from './constants.js';
import { NF_INET_HOOK, NF_NETDEV_HOOK, type Hook } from './constants.js';
import { codeOf } from '../validate.js';

const hooksOf = (family: Family | string): Readonly<Record<string, number>> => (family === 'netdev' ? NF_NETDEV_HOOK : NF_INET_HOOK);

/** The kernel's number for `hook` in `family`, or a RangeError naming the hooks the family has. */
export function hookNumber(family: Family | string, hook: unknown, what: string): number {
  return codeOf(hooksOf(family), hook, what);
}

const INET_BY_NUMBER = Object.fromEntries(Object.entries(NF_INET_HOOK).map(([k, v]) => [v, k])) as Record<number, Hook>;
const NETDEV_BY_NUMBER = Object.fromEntries(Object.entries(NF_NETDEV_HOOK).map(([k, v]) => [v, k])) as Record<number, Hook>;

/** The hook's name in `family` (undefined for a number this version does not know). */
export function hookName(family: Family | string, n: number): Hook | undefined {
  return (family === 'netdev' ? NETDEV_BY_NUMBER : INET_BY_NUMBER)[n];
}

/** Device names back to back, each with its NUL: how the compact format carries a device list. */
export function devicesBytes(devices: readonly string[]): Uint8Array {
  return new TextEncoder().encode(devices.map((d) => `${d}\0`).join(''));
}

/** The names of a device-list attribute (devicesBytes' inverse). */
export function devicesOf(b: Uint8Array | undefined): string[] {
  if (!b) return [];
  return new TextDecoder()
    .decode(b)
    .split('\0')
    .filter((d) => d.length > 0);
}

/** Refuses a device list nf_tables would not take: names of 1 to 15 bytes (IFNAMSIZ), no duplicates. */
export function checkDevices(devices: unknown, what: string, atLeastOne: boolean): void {
  if (!Array.isArray(devices)) throw new RangeError(`${what} devices must be a list of interface names, got ${typeof devices}`);
  if (atLeastOne && devices.length === 0) throw new RangeError(`${what} needs at least one device`);
  const seen = new Set<string>();
  for (const d of devices as unknown[]) {
    if (typeof d !== 'string' || d.length === 0 || Buffer.byteLength(d) > 15 || d.includes('\0')) {
      throw new RangeError(`${what} device ${JSON.stringify(d)} is not an interface name (1 to 15 bytes)`);
    }
    if (seen.has(d)) throw new RangeError(`${what} lists device ${d} twice`);
    seen.add(d);
  }
}
