// Queue-time limits counted in UTF-8 bytes, as nf_tables counts them (names up to 255 bytes plus
// the NUL, comments up to 128), at the edges and for multi-byte text. No kernel needed.

import { describe, expect, it } from 'vitest';
import { checkComment, checkName } from '../../src/nft/validate.js';

describe('name and comment limits', () => {
  it('takes a name of 255 bytes and refuses 256, ASCII or not', () => {
    expect(() => checkName('chain', 'x'.repeat(255))).not.toThrow();
    expect(() => checkName('chain', 'x'.repeat(256))).toThrow(/chain name "x{40}\.\.\." is 256 bytes; nf_tables allows 255/);
    // 'é' is 2 bytes: 127 of them (254 bytes) and one 'x' fit, 128 do not.
    expect(() => checkName('set', 'é'.repeat(127) + 'x')).not.toThrow();
    expect(() => checkName('set', 'é'.repeat(128))).toThrow(/is 256 bytes/);
    // '日' is 3 bytes: 85 fit (255), 86 do not; both are short in UTF-16 units.
    expect(() => checkName('table', '日'.repeat(85))).not.toThrow();
    expect(() => checkName('table', '日'.repeat(86))).toThrow(/is 258 bytes/);
  });

  it('takes a comment of 128 bytes and refuses 129', () => {
    expect(() => checkComment('rule', 'c'.repeat(128))).not.toThrow();
    expect(() => checkComment('rule', 'c'.repeat(129))).toThrow(/rule comment is 129 bytes; at most 128/);
    expect(() => checkComment('rule', 'ü'.repeat(64))).not.toThrow();
    expect(() => checkComment('rule', 'ü'.repeat(64) + 'c')).toThrow(/is 129 bytes/);
    expect(() => checkComment('rule', '😀'.repeat(32))).not.toThrow();
    expect(() => checkComment('rule', '😀'.repeat(32) + 'c')).toThrow(/is 129 bytes/);
  });
});
