// The shape check every Service, EndpointSlice and Node passes before the proxy reads it: the types
// of the fields it reads (schemas.json, compiled ahead of time into validators.generated.ts), so
// that a list where a string belongs is refused with one reason naming the field
// ("spec.ports[0].port: expected integer") instead of throwing a TypeError in the middle of a sync.
// What the values mean (addresses, port ranges, known enums) is checked later by the model, which
// reports it the same way; this only makes its types true.

import type { EndpointSlice, Node, Service } from '../objects.js';
import * as compiled from './validators.generated.js';

export interface KindTypes {
  Service: Service;
  EndpointSlice: EndpointSlice;
  Node: Node;
}

export type ValidatedKind = keyof KindTypes;

export type Validation<K extends ValidatedKind> = { object: KindTypes[K] } | { reason: string };

/** One error of the generated code (ajv's ErrorObject, the fields used here). */
interface SchemaError {
  instancePath: string;
  keyword: string;
  params: { type?: string | string[]; missingProperty?: string; pattern?: string };
}

type CompiledValidator = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };

const VALIDATORS = compiled as unknown as Record<ValidatedKind, CompiledValidator>;
const PATTERN_DESCRIPTIONS = (compiled as unknown as { PATTERN_DESCRIPTIONS: Record<string, string> }).PATTERN_DESCRIPTIONS;

/** The longest value quoted in a reason: enough to recognise it, not a 10 MB string in a log line. */
const MAX_QUOTED = 80;

/** The object with its type when its shape is right, or the first thing wrong with it. */
export function validateObject<K extends ValidatedKind>(kind: K, value: unknown): Validation<K> {
  const validate = VALIDATORS[kind];
  if (validate(value)) return { object: value as KindTypes[K] };
  const error = validate.errors?.[0];
  return { reason: error ? describe(error, value) : 'does not match its schema' };
}

/** "spec.ports[0].port: expected integer" from an error at "/spec/ports/0/port". */
function describe(error: SchemaError, root: unknown): string {
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapePointer);
  const { keyword, params } = error;
  if (keyword === 'required') return `${fieldPath([...segments, params.missingProperty ?? '?'])}: missing`;
  const field = segments.length ? fieldPath(segments) : '(the object)';
  switch (keyword) {
    case 'type': {
      const types = Array.isArray(params.type) ? params.type.join(' or ') : params.type;
      return `${field}: expected ${types}, not ${typeName(valueAt(root, segments))}`;
    }
    case 'pattern': {
      const rule = (params.pattern && PATTERN_DESCRIPTIONS[params.pattern]) ?? `a string matching ${params.pattern}`;
      return `${field}: ${quote(valueAt(root, segments))} is not ${rule}`;
    }
    default:
      return `${field}: invalid (${keyword})`;
  }
}

/** JSON Pointer unescaping (RFC 6901): "~1" is "/", "~0" is "~". */
function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Segments as a field path: indexes in brackets, keys that are not identifiers quoted (labels). */
function fieldPath(segments: readonly string[]): string {
  let out = '';
  for (const s of segments) {
    if (/^(0|[1-9][0-9]*)$/.test(s)) out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += out === '' ? s : `.${s}`;
    else out += `[${quote(s)}]`;
  }
  return out;
}

function valueAt(root: unknown, segments: readonly string[]): unknown {
  let v = root;
  for (const s of segments) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[s] : undefined;
  return v;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'number' && !Number.isInteger(v) ? 'number' : typeof v;
}

/** JSON text of a value, cut short: control characters come out escaped, so the reason prints safely. */
function quote(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}...` : text;
}
