// Small text helpers shared by the renderers: nft's time format and string quoting.

/** Milliseconds as nft writes them: 1d2h3m4s5ms (0 -> 0s). */
export function formatTime(ms: number): string {
  if (ms === 0) return '0s';
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ];
  let rest = ms;
  let out = '';
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${name}`;
      rest -= n * size;
    }
  }
  return out;
}

/** Bytes as nft prints raw data: `0x0a0b`. */
export function hexBytes(b: Uint8Array): string {
  return `0x${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;
}

/** A double-quoted nft string. nft has no escapes inside quotes, so a quote cannot be written at all. */
export function quoteString(s: string): string {
  if (s.includes('"')) throw new RangeError(`nft text cannot contain a double quote: ${JSON.stringify(s)}`);
  return `"${s}"`;
}
