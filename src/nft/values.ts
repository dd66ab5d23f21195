// Element keys and data: caller values <-> the bytes the kernel stores, for single types and
// concatenations (each field padded to a 32-bit register), and the interval encoding nft uses for
// `flags interval` sets (start elements plus INTERVAL_END markers one past each range's end).

import { parseIPv4Into, parsePrefix, prefixMask } from './types/address.js';
import { bytesToUint, paddedSize, INET_PROTOCOLS, TYPE_INET_PROTO, TYPE_INET_SERVICE, TYPE_INTEGER, TYPE_IPV4_ADDR, type Datatype, type Scalar } from './types/datatypes.js';

export function encodeValues(types: readonly Datatype[], values: readonly Scalar[], what: string): Uint8Array {
  if (values.length !== types.length) {
    throw new RangeError(`${what}: ${values.length} value(s) for ${types.length} type(s) (${types.map((t) => t.name).join(' . ')})`);
  }
  try {
    if (types.length === 1) return types[0]!.parse(values[0]!);
    const total = types.reduce((s, t) => s + paddedSize(t), 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (let i = 0; i < types.length; i++) {
      out.set(types[i]!.parse(values[i]!), at);
      at += paddedSize(types[i]!);
    }
    return out;
  } catch (err) {
    throw new RangeError(`${what}: ${(err as Error).message}`);
  }
}

/** The byte length of a key or data of these types (concatenations pad each field to 4 bytes). */
export function valuesLength(types: readonly Datatype[]): number {
  return types.length === 1 ? types[0]!.size : types.reduce((s, t) => s + paddedSize(t), 0);
}

/**
 * encodeValues, written in place; the caller adds what the values belong to when it throws.
 *
 * The fields of kube-proxy's maps (an IPv4 address, a protocol name, a port) are written here
 * rather than by their type's write(): this runs for every field of every element, and most of a
 * large list runs before V8 has optimised it, when each call through write() (and writeUint below
 * it) is a real call (Node 20; docs/decisions.md).
 * Anything else, and a value these cases do not take, goes through write(), which also throws.
 */
export function writeValues(types: readonly Datatype[], values: readonly Scalar[], out: Uint8Array, at: number): void {
  if (values.length !== types.length) {
    throw new RangeError(`${values.length} value(s) for ${types.length} type(s) (${types.map((t) => t.name).join(' . ')})`);
  }
  // A concatenation pads each field with zeroes to a 32-bit register; a single value is not padded.
  const single = types.length === 1;
  let pos = at;
  for (let i = 0; i < types.length; i++) {
    const t = types[i]!;
    const v = values[i]!;
    switch (t.id) {
      case TYPE_IPV4_ADDR:
        if (typeof v === 'string' && parseIPv4Into(v, out, pos)) {
          pos += 4;
          continue;
        }
        break;
      case TYPE_INET_SERVICE:
        if (typeof v === 'number' && v >>> 0 === v && v < 0x10000) {
          out[pos] = v >>> 8;
          out[pos + 1] = v & 0xff;
          if (single) pos += 2;
          else {
            out[pos + 2] = 0;
            out[pos + 3] = 0;
            pos += 4;
          }
          continue;
        }
        break;
      case TYPE_INTEGER:
        // The slots layout's slot numbers and endpoint numbers: a 32-bit integer in the host's
        // order (little-endian here, as writeUint writes 'host').
        if (t.size === 4 && t.byteorder === 'host' && typeof v === 'number' && v >>> 0 === v) {
          out[pos] = v & 0xff;
          out[pos + 1] = (v >>> 8) & 0xff;
          out[pos + 2] = (v >>> 16) & 0xff;
          out[pos + 3] = v >>> 24;
          pos += 4;
          continue;
        }
        break;
      case TYPE_INET_PROTO: {
        // ownCode's test, written out: its one keyed load serves every table of names and goes
        // megamorphic, where this one sees only INET_PROTOCOLS (docs/decisions.md).
        const n = typeof v === 'string' ? INET_PROTOCOLS[v] : undefined;
        if (typeof n === 'number') {
          out[pos] = n;
          if (single) pos += 1;
          else {
            out[pos + 1] = 0;
            out[pos + 2] = 0;
            out[pos + 3] = 0;
            pos += 4;
          }
          continue;
        }
        break;
      }
    }
    t.write(v, out, pos);
    const padded = single ? t.size : paddedSize(t);
    // At most 3 bytes: a loop, not Buffer.fill (a call into C++ per padded field of every element).
    for (let p = pos + t.size; p < pos + padded; p++) out[p] = 0;
    pos += padded;
  }
}

export function decodeValues(types: readonly Datatype[], bytes: Uint8Array): Scalar[] {
  if (types.length === 1) return [types[0]!.toValue(bytes.subarray(0, types[0]!.size))];
  const out: Scalar[] = [];
  let at = 0;
  for (const t of types) {
    out.push(t.toValue(bytes.subarray(at, at + t.size)));
    at += paddedSize(t);
  }
  return out;
}

/** decodeValues of the bytes at `at`, without views. */
export function readValues(types: readonly Datatype[], buf: Uint8Array, at: number): Scalar[] {
  if (types.length === 1) return [types[0]!.read(buf, at)];
  // Sized up front: an array grown by push() reserves 17 slots, which for the 120k decoded
  // elements of a 10k-service table was most of their memory.
  const out = new Array<Scalar>(types.length);
  let pos = at;
  for (let i = 0; i < types.length; i++) {
    const t = types[i]!;
    out[i] = t.read(buf, pos);
    pos += paddedSize(t);
  }
  return out;
}

/** Splits concatenated bytes into one slice per field. */
export function splitFields(types: readonly Datatype[], bytes: Uint8Array): Uint8Array[] {
  if (types.length === 1) return [bytes.subarray(0, types[0]!.size)];
  const out: Uint8Array[] = [];
  let at = 0;
  for (const t of types) {
    out.push(bytes.subarray(at, at + t.size));
    at += paddedSize(t);
  }
  return out;
}

/** An inclusive range of one field, as bytes in the type's register order. */
export interface ByteRange {
  from: Uint8Array;
  to: Uint8Array;
}

/** "a-b" as a range, or undefined when an end is no value of the type: a name with a dash (`ipv6-icmp`) is one value. */
function splitRange(type: Datatype, value: string, dash: number): ByteRange | undefined {
  try {
    return { from: type.parse(value.slice(0, dash).trim()), to: type.parse(value.slice(dash + 1).trim()) };
  } catch {
    return undefined;
  }
}

/** Whether "a-b" is a range of `type` (not one value whose name has a dash). */
function isRangeText(type: Datatype | undefined, value: string): boolean {
  const dash = value.indexOf('-', 1);
  return dash > 0 && (type === undefined || (type.name !== 'ipv6_addr' && splitRange(type, value, dash) !== undefined));
}

/**
 * Whether an element of a set with these key types is a range or prefix ("1000-2000",
 * "198.18.0.0/15", or keyEnd): an anonymous set with one is an interval set. A name with a dash
 * (`ipv6-icmp`, `nd-neighbor-solicit`) is one value.
 */
export function hasRangeSyntax(set: { key: readonly Datatype[] }, e: { key: readonly Scalar[]; keyEnd?: readonly Scalar[] | undefined }): boolean {
  return e.keyEnd !== undefined || e.key.some((k, i) => typeof k === 'string' && (k.includes('/') || (/^[^:]+-/.test(k) && isRangeText(set.key[i], k))));
}

/** "198.18.0.0/15", "1000-2000" or a plain value -> an inclusive range. */
export function parseIntervalValue(type: Datatype, value: Scalar, end: Scalar | undefined, what: string): ByteRange {
  if (end !== undefined) return { from: type.parse(value), to: type.parse(end) };
  if (typeof value === 'string') {
    if ((type.name === 'ipv4_addr' || type.name === 'ipv6_addr') && value.includes('/')) {
      const p = parsePrefix(value, type.name === 'ipv4_addr' ? 4 : 6);
      if (!p) throw new RangeError(`${what}: "${value}" is not a ${type.name} prefix`);
      const mask = prefixMask(type.size, p.length);
      const to = p.bytes.map((b, i) => b | (~mask[i]! & 0xff));
      return { from: p.bytes, to };
    }
    const dash = value.indexOf('-', 1);
    if (dash > 0 && type.name !== 'ipv6_addr') {
      const range = splitRange(type, value, dash);
      if (range) return range;
    }
  }
  const b = type.parse(value);
  return { from: b, to: b };
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Big-endian increment; null when it wraps (the range ends at the type's maximum). */
export function incrementBE(b: Uint8Array): Uint8Array | null {
  const out = new Uint8Array(b);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== 0xff) {
      out[i]!++;
      return out;
    }
    out[i] = 0;
  }
  return null;
}

export function decrementBE(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== 0) {
      out[i]!--;
      return out;
    }
    out[i] = 0xff;
  }
  return out;
}

/**
 * The rbtree compares keys with memcmp, so interval sets keep host-order values (marks, numgen
 * results) in network order, and the rule converts the packet's value with a byteorder expression
 * before the lookup, as nft does.
 */
function toBE(type: Datatype, b: Uint8Array): Uint8Array {
  return type.byteorder === 'big' ? b : Uint8Array.from(b).reverse();
}
function fromBE(type: Datatype, b: Uint8Array): Uint8Array {
  return type.byteorder === 'big' ? b : Uint8Array.from(b).reverse();
}

export interface IntervalElement {
  key: Uint8Array;
  end: boolean;
  /** Index of the caller's element this one came from (-1 for the leading marker). */
  source: number;
}

/**
 * nft's encoding of an interval set (rbtree, non-concatenated key): a leading INTERVAL_END marker at
 * zero, then for each range its start and an INTERVAL_END one past its end (none when the range runs
 * to the maximum). Ranges must not overlap.
 */
export function intervalElements(type: Datatype, ranges: readonly ByteRange[], what: string, merge = false): IntervalElement[] {
  const sorted = ranges
    .map((r, i) => ({ from: toBE(type, r.from), to: toBE(type, r.to), source: i }))
    .sort((a, b) => compareBytes(a.from, b.from));
  for (const r of sorted) if (compareBytes(r.from, r.to) > 0) throw new RangeError(`${what}: range start is above its end`);
  // Anonymous sets (not maps) merge overlapping and adjacent ranges, as nft does for `{ 198.18.0.0/15, 198.19.9.9 }`.
  const ranges2: typeof sorted = [];
  for (const r of sorted) {
    const last = ranges2[ranges2.length - 1];
    const adjacent = last ? incrementBE(last.to) : null;
    if (merge && last && (compareBytes(r.from, last.to) <= 0 || (adjacent && compareBytes(r.from, adjacent) === 0))) {
      if (compareBytes(r.to, last.to) > 0) last.to = r.to;
      continue;
    }
    ranges2.push({ ...r });
  }
  const out: IntervalElement[] = [{ key: new Uint8Array(type.size), end: true, source: -1 }];
  let prevTo: Uint8Array | null = null;
  for (const r of ranges2) {
    if (prevTo && compareBytes(r.from, prevTo) <= 0) throw new RangeError(`${what}: intervals overlap`);
    prevTo = r.to;
    if (out.length === 1 && r.from.every((b) => b === 0)) out.length = 0;
    out.push({ key: r.from, end: false, source: r.source });
    // Every range gets its end marker, also when the next range starts right there (nft 1.0.6
    // writes both): the rbtree refuses a start whose closest lower element is another start in a
    // named set (a partial overlap, ENOTEMPTY reported as EEXIST; nft_set_rbtree.c since Linux 6.2).
    const next = incrementBE(r.to);
    if (next) out.push({ key: next, end: true, source: r.source });
  }
  return out;
}

/** The inverse of intervalElements, from a dump (any order). */
export function rangesFromIntervalElements(
  type: Datatype,
  elems: readonly { key: Uint8Array; end: boolean; index: number }[],
): { from: Uint8Array; to: Uint8Array; index: number }[] {
  // At one key, an end marker sorts before a start (as nft's interval_map_decompose sorts them):
  // ranges that touch hold both there, the first range's end and the next one's start.
  const sorted = [...elems].sort((a, b) => compareBytes(a.key, b.key) || Number(b.end) - Number(a.end));
  const out: { from: Uint8Array; to: Uint8Array; index: number }[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const e = sorted[i]!;
    if (e.end) continue;
    // The range ends before the next marker: an end marker, or the start of an adjacent range.
    const next = sorted[i + 1];
    const to = next ? decrementBE(next.key) : new Uint8Array(type.size).fill(0xff);
    out.push({ from: fromBE(type, e.key), to: fromBE(type, to), index: e.index });
  }
  return out;
}

/**
 * The elements of a single-field interval set as the kernel will hold them after nftlink encodes
 * them: sorted, merged where the encoder merges (anonymous sets), prefixes and ranges as ranges.
 */
export function intervalView<E extends { key: readonly Scalar[]; keyEnd?: readonly Scalar[] }>(
  type: Datatype,
  elements: readonly E[],
  merge: boolean,
  what: string,
): (E & { key: Scalar[]; keyEnd?: Scalar[] })[] {
  const ranges = elements.map((e) => parseIntervalValue(type, e.key[0]!, e.keyEnd?.[0], what));
  const encoded = intervalElements(type, ranges, what, merge);
  const wire = encoded.map((w, index) => ({ key: w.key, end: w.end, index }));
  return rangesFromIntervalElements(type, wire).map((r) => {
    const src = elements[encoded[r.index]!.source]!;
    const out = { ...src, key: [type.toValue(r.from)] } as E & { key: Scalar[]; keyEnd?: Scalar[] };
    if (compareBytes(r.from, r.to) !== 0) out.keyEnd = [type.toValue(r.to)];
    else delete out.keyEnd;
    return out;
  });
}

/** The text of one field's range: a prefix when it is one, `a-b` otherwise, `a` for a single value. */
export function formatRange(type: Datatype, from: Uint8Array, to: Uint8Array): string {
  if (compareBytes(from, to) === 0) return type.format(from);
  if (type.name === 'ipv4_addr' || type.name === 'ipv6_addr') {
    const len = prefixLengthOf(from, to);
    if (len >= 0) return `${type.format(from)}/${len}`;
  }
  return `${type.format(from)}-${type.format(to)}`;
}

function prefixLengthOf(from: Uint8Array, to: Uint8Array): number {
  const bits = from.length * 8;
  for (let len = 0; len <= bits; len++) {
    const mask = prefixMask(from.length, len);
    const ok = from.every((b, i) => (b & ~mask[i]! & 0xff) === 0 && (to[i]! | mask[i]!) === 0xff && (to[i]! & mask[i]!) === b);
    if (ok) return len;
  }
  return -1;
}

export function bytesKey(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

let scratch = Buffer.alloc(256);

/**
 * The bytes of these values as a string (one character per byte), for use as a Map key: the same
 * identity encodeValues gives, without allocating the bytes (the sync engine computes hundreds of
 * thousands of these per full sync at 30k services).
 */
export function valuesKey(types: readonly Datatype[], values: readonly Scalar[], what: string): string {
  const len = valuesLength(types);
  if (len > scratch.length) scratch = Buffer.alloc(Math.max(len, scratch.length * 2));
  try {
    writeValues(types, values, scratch, 0);
  } catch (err) {
    throw new RangeError(`${what}: ${(err as Error).message}`);
  }
  return scratch.toString('latin1', 0, len);
}

/**
 * The identity of an element within its set: its key bytes (for interval sets, the range's ends).
 * Two elements with the same identity are the same kernel element, whatever their data.
 */
export function elementKey(set: { name: string; key: readonly Datatype[]; flags?: readonly string[]; anonymous?: boolean }, e: { key: readonly Scalar[]; keyEnd?: readonly Scalar[] }): string {
  if (set.flags?.includes('interval') || set.anonymous) {
    return set.key
      .map((t, i) => {
        const r = parseIntervalValue(t, e.key[i]!, e.keyEnd?.[i], `set ${set.name}`);
        return `${bytesKey(r.from)}-${bytesKey(r.to)}`;
      })
      .join('.');
  }
  return valuesKey(set.key, e.key, `set ${set.name}`);
}

export { bytesToUint };
