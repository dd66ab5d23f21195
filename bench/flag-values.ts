// The values the benchmarks' flags take, parsed once for every entry (scale, process, repair):
// each error names the flag and ends with the entry's usage text.

import { isLayoutName, LAYOUT_NAMES, type LayoutName } from '../src/proxy/layout/index.js';

/** An integer of at least `min`. */
export function intValue(flag: string, v: string | undefined, min: number, usage: string): number {
  const n = Number(v);
  if (v === undefined || v === '' || !Number.isInteger(n) || n < min) throw new Error(`${flag} needs an integer >= ${min}\n${usage}`);
  return n;
}

/** `SERVICESxENDPOINTS,...`, each at least 1. */
export function sizesValue(v: string | undefined, usage: string): [number, number][] {
  return (v ?? '').split(',').map((s) => {
    const m = /^(\d+)x(\d+)$/.exec(s.trim());
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`--sizes takes SERVICESxENDPOINTS,... (got "${s}")\n${usage}`);
    return [Number(m[1]), Number(m[2])];
  });
}

/** Layout names, comma-separated. */
export function layoutsValue(v: string | undefined, usage: string): LayoutName[] {
  return (v ?? '').split(',').map((s) => {
    if (!isLayoutName(s)) throw new Error(`--layouts: unknown layout "${s}" (${LAYOUT_NAMES.join(', ')})\n${usage}`);
    return s;
  });
}
