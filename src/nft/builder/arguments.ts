// The rule builder's arguments, checked for callers without TypeScript: a message that names the
// call, the argument and what it takes, instead of what a wrong value breaks further in.

import { NFT_CMP, type CmpOp } from '../netlink/constants.js';
import { checkFields, kindOf, type Fields } from '../input-shape.js';
import type { Field } from './fields.js';

const FIELD_HINT = "one of the library's fields (ip.saddr, tcp.dport, meta.l4proto, ct.state, ...)";

export function checkField(call: string, f: unknown): asserts f is Field {
  const x = f as Partial<Field> | null;
  if (typeof x !== 'object' || x === null || typeof x.load !== 'function' || typeof x.dtype !== 'object') {
    throw new TypeError(`${call}(): the field must be ${FIELD_HINT}, not ${kindOf(f)}`);
  }
}

/** One field or a non-empty list of them (a concatenation). */
export function checkFieldList(call: string, fields: unknown): void {
  if (!Array.isArray(fields)) return checkField(call, fields);
  if (fields.length === 0) throw new TypeError(`${call}(): the list of fields is empty`);
  fields.forEach((f) => checkField(call, f));
}

const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint';

/** A value to compare a field with: a string, number or bigint, or a list of them. */
export function checkMatchValue(field: Field, value: unknown): void {
  if (isScalar(value) || (Array.isArray(value) && value.length > 0 && value.every(isScalar))) return;
  throw new TypeError(`${field.text}: the value must be a ${field.dtype.name} (a string or number) or a non-empty list of them, not ${kindOf(value)}`);
}

export function checkCmpOp(field: Field, op: unknown): asserts op is CmpOp {
  if (typeof op !== 'string' || typeof (NFT_CMP as Record<string, number>)[op] !== 'number') {
    throw new TypeError(`${field.text}: the comparison must be one of: ${Object.keys(NFT_CMP).join(', ')}, not ${kindOf(op)}`);
  }
}

/** An options object: undefined, or an object with only the known fields, each of its type. */
export function checkBuilderOptions(call: string, opts: unknown, fields: Fields): void {
  if (opts === undefined) return;
  checkFields(`${call}() options`, opts, fields, []);
}

export function checkInteger(call: string, what: string, v: unknown, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new TypeError(`${call}(): ${what} must be an integer from ${min} to ${max}, not ${kindOf(v)}`);
  }
}

export function checkString(call: string, what: string, v: unknown): void {
  if (typeof v !== 'string' || v === '') throw new TypeError(`${call}(): ${what} must be a non-empty string, not ${kindOf(v)}`);
}
