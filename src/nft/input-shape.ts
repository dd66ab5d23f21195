// The shape of what callers queue, checked before anything is encoded. TypeScript's types promise
// it; callers without them (JavaScript, objects read from JSON) get a message that names the field
// and what it takes instead of an internal one ("reading 'length'", `set flag "t"` for a flags
// string, "Cannot convert 5s to a BigInt"). Values inside the fields (names of hooks, keys, data
// types) are checked by the encoders as they write them (validate.ts).

import type { Operation, Verb } from './operations.js';
import type { TransactionObject } from './transaction.js';
import { checkDatatypes } from './validate.js';

export type Fields = Record<string, 'string' | 'number' | 'boolean' | 'object' | 'array' | 'function' | 'any'>;

// Every field of the object model (objects.ts), as callers write them and as dumps read them back.
// `device`/`devices` on chains: the netdev and inet ingress hooks name their devices.
const TABLE: Fields = { family: 'string', name: 'string', flags: 'array', comment: 'string', handle: 'number' };
const CHAIN: Fields = { family: 'string', table: 'string', name: 'string', base: 'object', comment: 'string', handle: 'number', device: 'string', devices: 'array' };
const BASE_CHAIN: Fields = { type: 'string', hook: 'string', priority: 'number', policy: 'string', device: 'string', devices: 'array' };
const RULE: Fields = { family: 'string', table: 'string', chain: 'string', exprs: 'array', comment: 'string', tag: 'string', exprsDigest: 'number', handle: 'number', position: 'number' };
const SET: Fields = {
  family: 'string',
  table: 'string',
  name: 'string',
  key: 'array',
  data: 'any',
  typeof: 'object',
  flags: 'array',
  timeout: 'number',
  gcInterval: 'number',
  size: 'number',
  policy: 'string',
  comment: 'string',
  anonymous: 'boolean',
  handle: 'number',
  elements: 'array',
  elementKeys: 'array',
  // A dump's (DumpOptions.hashElements); a transaction ignores it.
  elementHashes: 'any',
  // A map of named objects: the objects' type (named-objects.ts).
  objects: 'string',
};
const SET_REF: Fields = { family: 'string', table: 'string', name: 'string' };
const ELEMENT: Fields = { key: 'array', keyEnd: 'array', value: 'any', timeout: 'number', expires: 'number', comment: 'string' };

const REQUIRED = {
  table: ['family', 'name'],
  chain: ['family', 'table', 'name'],
  base: ['type', 'hook', 'priority'],
  rule: ['family', 'table', 'chain', 'exprs'],
  set: ['family', 'table', 'name'],
  element: ['key'],
} as const;

/** How a caller's value reads in a message: `the string "5s"`, `an array`, `number 7`. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Uint8Array) return 'a Uint8Array';
  return typeof v === 'string' ? `the string ${JSON.stringify(v)}` : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

const WANTS: Record<Fields[string], string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  function: 'a function',
  any: 'a value',
};

function fits(want: Fields[string], v: unknown): boolean {
  if (v === undefined || want === 'any') return true;
  if (want === 'array') return Array.isArray(v);
  if (want === 'object') return typeof v === 'object' && v !== null && !Array.isArray(v);
  return typeof v === want;
}

/**
 * Whether an object has its fields: required ones present, no unknown one, each of its type. No
 * allocation: this runs for every element of 100,000 and every rule of 20,000.
 */
function hasFields(obj: unknown, fields: Fields, required: readonly string[]): boolean {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return false;
  const o = obj as Record<string, unknown>;
  for (let i = 0; i < required.length; i++) if (o[required[i]!] === undefined) return false;
  for (const k in o) {
    const want = fields[k];
    if (want === undefined || !fits(want, o[k])) return false;
  }
  return true;
}

/**
 * Checks one object against its fields: an object, with no unknown key, each field of its type.
 * `what` names it in the message, made only when something is wrong: a function for the hot
 * callers (an element of 100,000).
 */
export function checkFields(what: string | (() => string), obj: unknown, fields: Fields, required: readonly string[]): void {
  if (hasFields(obj, fields, required)) return;
  const named = typeof what === 'string' ? what : what();
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new TypeError(`${named} must be an object, not ${kindOf(obj)}`);
  const o = obj as Record<string, unknown>;
  for (const k of required) if (o[k] === undefined) throw new TypeError(`${named} has no ${k}`);
  for (const k in o) {
    const want = fields[k];
    if (want === undefined) throw new TypeError(`${named} has an unknown field "${k}" (known: ${Object.keys(fields).join(', ')})`);
    const v = o[k];
    if (!fits(want, v)) throw new TypeError(`${named}: ${k} must be ${WANTS[want]}${k === 'flags' && typeof v === 'string' ? ` (["${v}"], not "${v}")` : ''}, not ${kindOf(v)}`);
  }
}

/** Milliseconds: a non-negative integer. */
function checkMilliseconds(what: string | (() => string), v: unknown): void {
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new TypeError(`${typeof what === 'string' ? what : what()} must be a whole number of milliseconds, not ${kindOf(v)}`);
  }
}

export function checkTable(t: unknown): void {
  checkFields('table', t, TABLE, REQUIRED.table);
}

export function checkChain(c: unknown): void {
  checkFields('chain', c, CHAIN, REQUIRED.chain);
  const base = (c as { base?: unknown }).base;
  if (base !== undefined) checkFields('chain base', base, BASE_CHAIN, REQUIRED.base);
}

export function checkRule(r: unknown): void {
  checkFields('rule', r, RULE, REQUIRED.rule);
  const exprs = (r as { exprs: unknown[] }).exprs;
  for (let i = 0; i < exprs.length; i++) {
    const e = exprs[i];
    if (typeof e !== 'object' || e === null || typeof (e as { type?: unknown }).type !== 'string') {
      throw new TypeError(`rule expression ${i} must be an expression object with a type (from the rule builder), not ${kindOf(e)}`);
    }
  }
}

export function checkSet(s: unknown, ref: boolean): void {
  if (ref && typeof s === 'object' && s !== null && (s as { key?: unknown }).key === undefined) {
    checkFields('set', s, SET_REF, REQUIRED.set);
    return;
  }
  checkFields('set', s, SET, REQUIRED.set);
  const set = s as { key?: unknown; data?: unknown; timeout?: unknown; gcInterval?: unknown; size?: unknown };
  // Also where the set only names the types of elements queued into it: its types encode them.
  if (Array.isArray(set.key) && set.key.length > 0) checkDatatypes(set.key, 'set key');
  if (Array.isArray(set.data)) checkDatatypes(set.data, 'set data');
  checkMilliseconds('set timeout', set.timeout);
  checkMilliseconds('set gcInterval', set.gcInterval);
  if (set.size !== undefined && (!Number.isInteger(set.size) || (set.size as number) < 0)) throw new TypeError(`set size must be a whole number, not ${kindOf(set.size)}`);
}

/**
 * One element: its fields, and a timeout only where the set has the timeout flag (the kernel
 * refuses it with EINVAL otherwise, naming nothing).
 */
export function checkElement(set: { name: string; flags?: readonly string[] }, e: unknown, i: number, verb: Verb): void {
  const timeout = (e as { timeout?: unknown } | null)?.timeout;
  // The common element: the right shape and no timeout, checked without making anything.
  if (timeout === undefined && hasFields(e, ELEMENT, REQUIRED.element)) return;
  const what = (): string => `element ${i} of set ${set.name}`;
  checkFields(what, e, ELEMENT, REQUIRED.element);
  if (timeout === undefined) return;
  checkMilliseconds(() => `${what()}: timeout`, timeout);
  if (verb !== 'delete' && verb !== 'destroy' && !(set.flags ?? []).includes('timeout')) {
    throw new RangeError(`${what()} has a timeout, but set ${set.name} has no timeout flag (declare it with flags: ['timeout'])`);
  }
}

/**
 * What a transaction's verbs take. Named objects and flowtables (named-objects.ts) are checked by
 * their own operations.
 */
const KINDS = ['table', 'chain', 'rule', 'set', 'object', 'flowtable'] as const;

/** The checks of an object given to a transaction's verb, by kind. */
export function checkTransactionObject(obj: unknown): void {
  if (typeof obj !== 'object' || obj === null) throw new TypeError(`expected { table }, { chain }, { rule }, { set } or { set, elements }, not ${kindOf(obj)}`);
  const o = obj as Record<string, unknown>;
  // The common shapes first, without a list made per call (a cold start queues 20k operations).
  if (o.rule !== undefined && o.table === undefined && o.chain === undefined && o.set === undefined) {
    for (const k in o) if (k !== 'rule') throw new TypeError(`unknown field "${k}" beside rule`);
    return checkRule(o.rule);
  }
  const kinds = KINDS.filter((k) => o[k] !== undefined);
  if (kinds.length !== 1) {
    throw new TypeError(`expected exactly one of ${KINDS.join(', ')}${kinds.length ? ` (got ${kinds.join(' and ')})` : ''}, in an object with the fields: ${Object.keys(o).join(', ') || 'none'}`);
  }
  for (const k in o) if (k !== kinds[0] && !(k === 'elements' && kinds[0] === 'set')) throw new TypeError(`unknown field "${k}" beside ${kinds[0]}`);
  if ('table' in o && o.table !== undefined) checkTable(o.table);
  else if ('chain' in o && o.chain !== undefined) checkChain(o.chain);
  else if (kinds[0] === 'set') {
    const elements = o.elements;
    checkSet(o.set, elements !== undefined);
    if (elements !== undefined && (typeof elements !== 'object' || elements === null || typeof (elements as Iterable<unknown>)[Symbol.iterator] !== 'function')) {
      throw new TypeError(`elements of set ${(o.set as { name: string }).name} must be an array (or an iterable) of elements, not ${kindOf(elements)}`);
    }
  }
}

/**
 * The operation a verb and object stand for, before any check: what a validation error names.
 * Undefined when the object is none of the kinds.
 */
export function operationOf(verb: Verb, obj: TransactionObject | unknown): Operation | undefined {
  if (typeof obj !== 'object' || obj === null) return undefined;
  const o = obj as Partial<Record<'table' | 'chain' | 'rule' | 'set' | 'elements', unknown>>;
  if (typeof o.table === 'object' && o.table !== null) return { verb, kind: 'table', table: o.table } as Operation;
  if (typeof o.chain === 'object' && o.chain !== null) return { verb, kind: 'chain', chain: o.chain } as Operation;
  if (typeof o.rule === 'object' && o.rule !== null) return { verb, kind: 'rule', rule: o.rule } as Operation;
  for (const kind of ['object', 'flowtable'] as const) {
    const given = (o as Record<string, unknown>)[kind];
    if (typeof given === 'object' && given !== null) return { verb, kind, [kind]: given } as unknown as Operation;
  }
  if (typeof o.set === 'object' && o.set !== null) {
    if (o.elements !== undefined) return { verb, kind: 'element', set: o.set, elements: Array.isArray(o.elements) ? o.elements : [] } as Operation;
    return { verb, kind: 'set', set: o.set } as Operation;
  }
  return undefined;
}

/** What commit() and check() say when given something other than a Transaction (`commit({})`). */
export function notATransaction(call: string, tx: unknown): TypeError {
  return new TypeError(`nftlink: ${call}(): expected a Transaction (new Transaction() or nft.transaction()), not ${kindOf(tx)}`);
}
