// IPv4/IPv6 text <-> network-order bytes, with the formatting nft uses when it lists a ruleset
// (RFC 5952 compression for IPv6, as inet_ntop does).

export function parseIPv4(text: string): Uint8Array | null {
  const out = new Uint8Array(4);
  return parseIPv4Into(text, out, 0) ? out : null;
}

/** Dotted quad -> 4 bytes at `at`; a hand-written scanner, since this runs once per element on large syncs. */
export function parseIPv4Into(text: string, out: Uint8Array, at: number): boolean {
  let part = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      if (++digits > 3 || value > 255) return false;
    } else if (c === 46 && digits > 0 && part < 3) {
      out[at + part++] = value;
      value = 0;
      digits = 0;
    } else return false;
  }
  if (part !== 3 || digits === 0) return false;
  out[at + 3] = value;
  return true;
}

export function formatIPv4(b: Uint8Array): string {
  return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
}

export function parseIPv6(text: string): Uint8Array | null {
  if (text.length === 0 || text.length > 45) return null;
  let head = text;
  let tailV4: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    tailV4 = parseIPv4(text.slice(lastColon + 1));
    if (!tailV4) return null;
    head = text.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = head.split('::');
  if (dbl.length > 2) return null;
  const parseGroups = (s: string): number[] | null => {
    if (s === '') return [];
    const groups = s.split(':');
    const out: number[] = [];
    for (const g of groups) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = parseGroups(dbl[0]!);
  const right = dbl.length === 2 ? parseGroups(dbl[1]!) : [];
  if (!left || !right) return null;
  let groups: number[];
  if (dbl.length === 2) {
    const fill = 8 - left.length - right.length;
    if (fill < 1) return null;
    groups = [...left, ...new Array<number>(fill).fill(0), ...right];
  } else {
    groups = left;
  }
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    out[i * 2] = groups[i]! >> 8;
    out[i * 2 + 1] = groups[i]! & 0xff;
  }
  if (tailV4) out.set(tailV4, 12);
  return out;
}

export function formatIPv6(b: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((b[i * 2]! << 8) | b[i * 2 + 1]!);
  // IPv4-mapped addresses print with a dotted tail, as inet_ntop does.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${formatIPv4(b.subarray(12, 16))}`;
  }
  // Longest run of zero groups (length >= 2) becomes "::".
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** A prefix as address bytes plus length: "198.18.0.0/15" or "2001:db8::/32". */
export interface Prefix {
  bytes: Uint8Array;
  length: number;
}

export function parsePrefix(text: string, family: 4 | 6): Prefix | null {
  const slash = text.indexOf('/');
  const addrText = slash >= 0 ? text.slice(0, slash) : text;
  const bytes = family === 4 ? parseIPv4(addrText) : parseIPv6(addrText);
  if (!bytes) return null;
  const max = bytes.length * 8;
  const length = slash >= 0 ? Number(text.slice(slash + 1)) : max;
  if (!Number.isInteger(length) || length < 0 || length > max) return null;
  if (slash >= 0 && !/^\d{1,3}$/.test(text.slice(slash + 1))) return null;
  return { bytes: maskBytes(bytes, length), length };
}

/** Keeps the first `length` bits. */
export function maskBytes(bytes: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const bits = Math.max(0, Math.min(8, length - i * 8));
    out[i] = bytes[i]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}

/** The netmask of a prefix length, as bytes. */
export function prefixMask(size: number, length: number): Uint8Array {
  return maskBytes(new Uint8Array(size).fill(0xff), length);
}

/** If `mask` is a contiguous run of leading ones, its length; else -1. */
export function maskPrefixLength(mask: Uint8Array): number {
  let len = 0;
  let seenZero = false;
  for (const byte of mask) {
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >> bit) & 1;
      if (one && seenZero) return -1;
      if (one) len++;
      else seenZero = true;
    }
  }
  return len;
}
