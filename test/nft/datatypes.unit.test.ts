import { describe, expect, it } from 'vitest';
import { formatIPv6, maskPrefixLength, parseIPv4, parseIPv6, parsePrefix } from '../../src/nft/types/address.js';
import { ct_state, inet_proto, inet_service, integer, ipv4_addr, ipv6_addr, mark, typeIdOf, typesFromId } from '../../src/nft/types/datatypes.js';

describe('addresses', () => {
  it('parses and refuses IPv4 text', () => {
    expect(Array.from(parseIPv4('198.18.0.1')!)).toEqual([198, 18, 0, 1]);
    for (const bad of ['198.18.0', '198.18.0.256', '198.18.0.1.2', '198.18..1', 'a.b.c.d', '1234.1.1.1', '']) expect(parseIPv4(bad)).toBeNull();
  });
  it('reads IPv4 addresses back from bytes, across more /24s than its prefix cache holds', () => {
    const buf = new Uint8Array(4);
    // 6,000 /24s (the cache keeps 4,096 and starts over), each read twice, with changing last octets.
    for (let round = 0; round < 2; round++) {
      for (let n = 0; n < 6000; n++) {
        // The same low octets under two first octets, one right after the other.
        for (const first of [198, 199]) {
          buf.set([first, 18 + (n >> 8), n & 255, (n * 31 + round) & 255], 0);
          expect(ipv4_addr.read(buf, 0)).toBe(`${buf[0]}.${buf[1]}.${buf[2]}.${buf[3]}`);
        }
      }
    }
    expect(ipv4_addr.read(Uint8Array.from([0, 0, 0, 0, 198, 19, 255, 255]), 4)).toBe('198.19.255.255');
  });
  it('formats IPv6 the way inet_ntop does (RFC 5952)', () => {
    const cases = ['2001:db8::1', '2001:db8::', '::', '::1', '2001:db8:0:1:1:1:1:1', '2001:db8::1:0:0:1', '::ffff:198.18.0.1'];
    for (const c of cases) expect(formatIPv6(parseIPv6(c)!)).toBe(c);
    expect(formatIPv6(parseIPv6('2001:0db8:0000:0000:0000:0000:0000:0001')!)).toBe('2001:db8::1');
    for (const bad of ['2001:db8:::1', '2001:db8::1::2', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9']) expect(parseIPv6(bad)).toBeNull();
  });
  it('parses prefixes and masks them', () => {
    const p = parsePrefix('198.19.1.1/15', 4)!;
    expect(Array.from(p.bytes)).toEqual([198, 18, 0, 0]);
    expect(p.length).toBe(15);
    expect(parsePrefix('198.18.0.0/33', 4)).toBeNull();
    expect(maskPrefixLength(Uint8Array.from([0xff, 0xfe, 0, 0]))).toBe(15);
    expect(maskPrefixLength(Uint8Array.from([0xff, 0x0f, 0, 0]))).toBe(-1);
  });
});

describe('data types', () => {
  it('encodes values in register order and round-trips them', () => {
    expect(Array.from(inet_service.parse(80))).toEqual([0, 80]);
    expect(Array.from(mark.parse(0x4000))).toEqual([0, 0x40, 0, 0]);
    expect(Array.from(inet_proto.parse('tcp'))).toEqual([6]);
    expect(inet_proto.toValue(Uint8Array.from([17]))).toBe('udp');
    expect(ct_state.format(ct_state.parse('established,related'))).toBe('established,related');
    expect(ipv6_addr.toValue(ipv6_addr.parse('2001:db8::1'))).toBe('2001:db8::1');
  });
  it('refuses values that do not fit, naming the type', () => {
    expect(() => inet_service.parse(70000)).toThrow(/inet_service: 70000 is out of range/);
    expect(() => inet_service.parse(-1)).toThrow(/out of range/);
    expect(() => ipv4_addr.parse('198.18.0.300')).toThrow(/ipv4_addr: "198.18.0.300" is not an IPv4 address/);
    expect(() => ct_state.parse('sleepy')).toThrow(/unknown flag "sleepy"/);
    // Names inherited from Object are no symbols: refused, not taken as a function or as 0.
    expect(() => inet_proto.parse('constructor')).toThrow(/inet_proto: "constructor" is not one of: icmp, igmp, tcp, .* \(or a number\)/);
    expect(() => ct_state.parse('toString')).toThrow(/unknown flag "toString"/);
  });
  it('folds concatenated type ids as nft does, and splits them back', () => {
    const t = typeIdOf([ipv4_addr, inet_proto, inet_service]);
    expect(t).toEqual({ id: (7 << 12) | (12 << 6) | 13, len: 12 });
    expect(typesFromId(t.id, t.len).map((x) => x.name)).toEqual(['ipv4_addr', 'inet_proto', 'inet_service']);
    expect(typesFromId(4, 2)[0]!.size).toBe(2);
    expect(typesFromId(4, 4)[0]!.name).toBe(integer().name);
  });
});
