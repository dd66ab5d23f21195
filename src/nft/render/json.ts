// A dump as plain JSON. A decoded ruleset holds what JSON has no form for: 64-bit counters as
// bigint, register values and raw attributes as Uint8Array, key types as Datatype objects. Its
// toJSON (not enumerable, so the object still compares and spreads as plain data) writes each as
// JSON can: a bigint as a number when it is a safe integer and as a decimal string beyond, bytes as
// a "0x..." hex string, a data type by its name.

import type { Ruleset } from '../objects.js';
import { hexBytes } from './text.js';

function isDatatype(v: object): v is { name: string; parse: unknown; format: unknown } {
  return typeof (v as { parse?: unknown }).parse === 'function' && typeof (v as { format?: unknown }).format === 'function';
}

/** A JSON.stringify replacer for nftlink's objects (rules, sets, expressions): see the file comment. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Uint8Array) return hexBytes(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && isDatatype(value)) return value.name;
  return value;
}

/** The ruleset as plain JSON data (what JSON.stringify writes for it). */
export function rulesetJson(rs: Ruleset): unknown {
  return JSON.parse(JSON.stringify({ ...rs }, jsonReplacer)) as unknown;
}

/** Gives a dumped ruleset its toJSON, so that `JSON.stringify(await nft.dump())` works. */
export function withToJSON(rs: Ruleset): Ruleset {
  Object.defineProperty(rs, 'toJSON', { value: () => rulesetJson(rs), enumerable: false, configurable: true, writable: true });
  return rs;
}
