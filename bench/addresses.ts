// Addresses for the benchmark rulesets, all from 198.18.0.0/15 (RFC 2544's benchmarking range):
// ClusterIPs (map keys) from the lower /16, endpoints (map values) from the upper /16, so a key
// never equals a value and every run builds byte-identical rulesets.

const HALF = 65_536;

/** The i-th address of 198.18.0.0/16 (i < 65,536): service IPs and map keys. */
export function serviceAddr(i: number): string {
  if (i < 0 || i >= HALF) throw new RangeError(`service address index ${i} is outside 198.18.0.0/16`);
  return `198.18.${i >> 8}.${i & 255}`;
}

/** The i-th address of 198.19.0.0/16 (i < 65,536): endpoints and map values. */
export function endpointAddr(i: number): string {
  if (i < 0 || i >= HALF) throw new RangeError(`endpoint address index ${i} is outside 198.19.0.0/16`);
  return `198.19.${i >> 8}.${i & 255}`;
}

/**
 * Key fields of the i-th element of the big concatenated map: 65,536 addresses per port, so
 * 100,000 elements use ports 80 and 81 (every key distinct).
 */
export function bigMapKey(i: number): [string, string, number] {
  return [serviceAddr(i % HALF), 'tcp', 80 + Math.floor(i / HALF)];
}

/** Value of the i-th element; `generation` shifts it so an update really changes the data. */
export function bigMapValue(i: number, generation = 0): [string, number] {
  return [endpointAddr((i + generation) % HALF), 8080 + (generation % 1000)];
}
