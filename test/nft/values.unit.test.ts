import { describe, expect, it } from 'vitest';
import { inet_proto, inet_service, integer, ipv4_addr, mark, type Datatype, type Scalar } from '../../src/nft/types/datatypes.js';
import { elementKey, encodeValues, intervalElements, intervalView, parseIntervalValue, rangesFromIntervalElements, writeValues } from '../../src/nft/values.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('interval sets, encoded as nft 1.0.6 writes them', () => {
  it('a leading end marker, starts, and end markers one past each range', () => {
    const ranges = ['198.18.0.0/16', '198.19.1.1', '198.19.2.0-198.19.2.9'].map((v) => parseIntervalValue(ipv4_addr, v, undefined, 't'));
    const wire = intervalElements(ipv4_addr, ranges, 't');
    expect(wire.map((w) => `${hex(w.key)}${w.end ? ' end' : ''}`)).toEqual([
      '00000000 end',
      'c6120000',
      'c6130000 end',
      'c6130101',
      'c6130102 end',
      'c6130200',
      'c613020a end',
    ]);
  });
  it('adjacent ranges each keep their end marker, ranges to the maximum have none, overlaps are refused', () => {
    const r = (a: number, b: number) => ({ from: inet_service.parse(a), to: inet_service.parse(b) });
    const adjacent = intervalElements(inet_service, [r(10, 10), r(11, 13)], 't');
    expect(adjacent.map((w) => `${hex(w.key)}${w.end ? ' end' : ''}`)).toEqual(['0000 end', '000a', '000b end', '000b', '000e end']);
    expect(intervalElements(inet_service, [r(0, 65535)], 't').map((w) => hex(w.key))).toEqual(['0000']);
    expect(() => intervalElements(inet_service, [r(1, 10), r(5, 20)], 't')).toThrow(/overlap/);
    expect(intervalElements(inet_service, [r(1, 10), r(5, 20)], 't', true).filter((w) => !w.end)).toHaveLength(1);
  });
  it('pairs touching ranges whatever order their shared key comes in (a dump of separate commits)', () => {
    const key = (v: string) => ipv4_addr.parse(v);
    const start = (v: string, index: number) => ({ key: key(v), end: false, index });
    const end = (v: string, index: number) => ({ key: key(v), end: true, index });
    // 198.18.6.0-198.18.6.9 and 198.18.6.10-198.18.6.20: the end of the first and the start of the second share .10.
    const startFirst = [end('198.18.6.21', 0), start('198.18.6.10', 1), end('198.18.6.10', 2), start('198.18.6.0', 3)];
    const endFirst = [end('198.18.6.21', 0), end('198.18.6.10', 2), start('198.18.6.10', 1), start('198.18.6.0', 3)];
    for (const marks of [startFirst, endFirst, [...startFirst].reverse(), [...endFirst].reverse()]) {
      const ranges = rangesFromIntervalElements(ipv4_addr, marks).map((r) => `${ipv4_addr.format(r.from)}-${ipv4_addr.format(r.to)} #${r.index}`);
      expect(ranges).toEqual(['198.18.6.0-198.18.6.9 #3', '198.18.6.10-198.18.6.20 #1']);
    }
  });
  it('host-order values are stored in network order, and decode back', () => {
    const ranges = [{ from: mark.parse(10), to: mark.parse(13) }];
    const wire = intervalElements(mark, ranges, 't');
    expect(hex(wire[1]!.key)).toBe('0000000a');
    const back = rangesFromIntervalElements(mark, wire.map((w, index) => ({ key: w.key, end: w.end, index })));
    expect(mark.toValue(back[0]!.from)).toBe(10);
    expect(mark.toValue(back[0]!.to)).toBe(13);
  });
  it('intervalView gives the elements as the kernel will hold them', () => {
    const view = intervalView(ipv4_addr, [{ key: ['198.18.0.0/24'] }, { key: ['198.18.0.5'] }, { key: ['198.18.1.0/24'] }], true, 't');
    expect(view).toEqual([{ key: ['198.18.0.0'], keyEnd: ['198.18.1.255'] }]);
  });
  it('element identity is the key, whatever the data', () => {
    const set = { name: 'm', key: [ipv4_addr] };
    expect(elementKey(set, { key: ['198.18.0.1'] })).toBe(elementKey(set, { key: ['198.18.0.1'] }));
    expect(elementKey(set, { key: ['198.18.0.1'] })).not.toBe(elementKey(set, { key: ['198.18.0.2'] }));
  });
});

describe('writeValues, whose common fields skip the types\' write()', () => {
  // The reference: each type's own parse(), field by field (encodeValues).
  const written = (types: Datatype[], values: Scalar[]): string => {
    const out = new Uint8Array(40).fill(0xee); // dirty: the padding must be written, not assumed
    writeValues(types, values, out, 3);
    return hex(out);
  };
  const expected = (types: Datatype[], values: Scalar[]): string => {
    const out = new Uint8Array(40).fill(0xee);
    out.set(encodeValues(types, values, 't'), 3);
    return hex(out);
  };
  const concat = [ipv4_addr, inet_proto, inet_service];

  it('writes the bytes the types write, padded in a concatenation and not alone', () => {
    for (const values of [
      ['198.18.0.1', 'tcp', 80],
      ['198.19.255.255', 'udp', 65535],
      ['0.0.0.0', 'sctp', 0],
      ['198.18.7.9', 'ipv6-icmp', 8080],
      ['198.18.7.9', 6, 443], // a protocol number takes write()
      ['198.18.7.9', 'tcp', '443'], // a port as text too
    ] as Scalar[][]) {
      expect(written(concat, values)).toBe(expected(concat, values));
    }
    for (const [t, v] of [[ipv4_addr, '198.18.1.2'], [inet_service, 80], [inet_service, '0x50'], [inet_proto, 'udp'], [inet_proto, 17], [mark, 7]] as [Datatype, Scalar][]) {
      expect(written([t], [v])).toBe(expected([t], [v]));
    }
    expect(written([inet_service, mark], [80, 0x10])).toBe(expected([inet_service, mark], [80, 0x10]));
    // 32-bit integers in the host's order (the slots layout's slot and endpoint numbers), alone and
    // in a concatenation; other sizes and orders, and text, take write().
    const balanceKey = [ipv4_addr, inet_proto, inet_service, integer(4, 'host')];
    for (const n of [0, 1, 0x12345678, 0xffffffff, '7', 2 ** 32]) {
      const check = (types: Datatype[], values: Scalar[]): void => {
        let want: string | Error;
        try {
          want = expected(types, values);
        } catch (err) {
          want = err as Error;
        }
        if (want instanceof Error) expect(() => written(types, values)).toThrow(want.message.replace(/^t: /, ''));
        else expect(written(types, values)).toBe(want);
      };
      check([integer(4, 'host')], [n]);
      check(balanceKey, ['198.18.0.1', 'tcp', 80, n]);
      check([integer(4, 'big')], [n]);
      check([integer(2, 'host')], [typeof n === 'number' ? n & 0xffff : n]);
    }
  });

  it('refuses what the types refuse, with their messages', () => {
    for (const [values, message] of [
      [['198.18.0.256', 'tcp', 80], /ipv4_addr: "198.18.0.256" is not an IPv4 address/],
      [['198.18.0', 'tcp', 80], /is not an IPv4 address/],
      [[3323068417, 'tcp', 80], /ipv4_addr: "3323068417" is not an IPv4 address/],
      [['198.18.0.1', 'constructor', 80], /inet_proto: "constructor" is not one of: icmp, igmp, tcp, .* \(or a number\)/],
      [['198.18.0.1', 'tcp', 65536], /inet_service/],
      [['198.18.0.1', 'tcp', -1], /inet_service/],
      [['198.18.0.1', 'tcp', 1.5], /inet_service: 1.5 is not an integer/],
    ] as [Scalar[], RegExp][]) {
      expect(() => writeValues(concat, values, new Uint8Array(12), 0)).toThrow(message);
      expect(() => encodeValues(concat, values, 't')).toThrow(message);
    }
  });
});
