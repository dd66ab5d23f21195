import { describe, expect, it } from 'vitest';
import { cString } from '../../src/nft/c-string.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('cString (text as the kernel keeps it)', () => {
  it('reads up to the first NUL, or to the end', () => {
    expect(cString(bytes('nftlink\0rest'))).toBe('nftlink');
    expect(cString(bytes('nftlink'))).toBe('nftlink');
    expect(cString(bytes('\0'))).toBe('');
    expect(cString(new Uint8Array(0))).toBe('');
  });

  it('reads a range of a larger buffer, stopping at its end or at a NUL in it', () => {
    const b = bytes('xxsvc-1\0yyzz');
    expect(cString(b, 2, 12)).toBe('svc-1');
    expect(cString(b, 2, 5)).toBe('svc');
    expect(cString(b, 8, 12)).toBe('yyzz');
  });

  it('decodes UTF-8', () => {
    for (const s of ['Zürich', 'кластер', '🙂 ok', 'a'.repeat(64), 'b'.repeat(65), `${'é'.repeat(40)}x`, 'x'.repeat(300)]) {
      expect(cString(bytes(`${s}\0tail`))).toBe(s);
      expect(cString(bytes(s))).toBe(new TextDecoder().decode(bytes(s)));
    }
  });
});
