import { describe, expect, it } from 'vitest';
import { canonicalAddress, parseFamilyIP } from '../../../src/proxy/model/service.js';

describe('canonicalAddress (the endpoints\' addresses)', () => {
  it('gives a canonical IPv4 address back as it is, the same string', () => {
    const text = ['198', '18', '0', '1'].join('.');
    expect(canonicalAddress(text, 'ipv4')).toBe(text);
    expect(canonicalAddress('0.0.0.0', 'ipv4')).toBe('0.0.0.0');
    expect(canonicalAddress('255.255.255.255', 'ipv4')).toBe('255.255.255.255');
  });

  it('agrees with parseFamilyIP on everything else', () => {
    const inputs = ['01.2.3.4', '1.2.3.04', '256.1.1.1', '1.2.3', '1.2.3.4.5', '1..2.3', '.1.2.3', '1.2.3.', '1.2.3.4 ', '1234.1.1.1', '', 'a.b.c.d', '2001:db8::1', '2001:DB8::1', '::ffff:198.18.0.1'];
    for (const text of inputs) {
      for (const family of ['ipv4', 'ipv6'] as const) {
        const ip = parseFamilyIP(text);
        expect(canonicalAddress(text, family), `${JSON.stringify(text)} as ${family}`).toBe(ip && ip.family === family ? ip.text : null);
      }
    }
  });

  it('takes only strings', () => {
    expect(canonicalAddress(undefined, 'ipv4')).toBeNull();
    expect(canonicalAddress(1234, 'ipv4')).toBeNull();
  });
});
