// Text as the kernel and libnftnl keep it (table, chain and set names, comments, device names): up
// to the first NUL, or to the end, UTF-8.

const utf8 = new TextDecoder();

/** The text of b[from, to) up to its first NUL. */
export function cString(b: Uint8Array, from = 0, to = b.length): string {
  let end = from;
  while (end < to && b[end] !== 0) end++;
  return utf8.decode(b.subarray(from, end));
}
