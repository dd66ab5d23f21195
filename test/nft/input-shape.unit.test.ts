// What callers without TypeScript pass wrong, refused before anything is encoded, with a message that
// names the field and what it takes; the error carries the operation as the caller gave it. No kernel.

import { describe, expect, it } from 'vitest';
import { FakeNftables } from '../../src/testing/index.js';
import { refusalOf } from '../helpers/refusal.js';
import { icmp, icmpv6, ip, ip6, meta, NftValidationError, numgen, rule, tcp, th, Transaction, types, type NftSet } from '../../src/index.js';

const table = { family: 'inet', name: 't' } as const;

/** The error of queuing `obj` after the table (nothing of it queued). */
const refusal = (obj: unknown): NftValidationError => refusalOf(new Transaction().add({ table }), obj);

describe('transaction input', () => {
  it('a missing name is named, with the operation as given', () => {
    const err = refusal({ table: { family: 'ip' } });
    expect(err.message).toBe('nftlink: add table ip undefined: table has no name');
    expect(err.operation).toEqual({ verb: 'add', kind: 'table', table: { family: 'ip' } });
    expect(err.operationIndex).toBe(1);
  });

  it('the real operation on errors found before the operation is made: name length, jumps', () => {
    const long = refusal({ chain: { family: 'inet', table: 't', name: 'c'.repeat(300) } });
    expect(long.operation).toMatchObject({ verb: 'add', kind: 'chain', chain: { table: 't', name: 'c'.repeat(300) } });
    const tx = new Transaction().create({ table });
    const r = rule('inet').jump('absent').rule('t', 'c');
    try {
      tx.add({ rule: r });
      throw new Error('accepted');
    } catch (err) {
      expect((err as NftValidationError).operation).toEqual({ verb: 'add', kind: 'rule', rule: r });
      expect((err as Error).message).toMatch(/add rule inet t c: a rule in chain c jumps to chain absent/);
    }
  });

  it('wrong types and unknown fields name the field and what it takes', () => {
    const set = (s: Record<string, unknown>) => ({ set: { family: 'inet', table: 't', name: 's', key: [types.ipv4_addr], ...s } });
    expect(refusal(set({ flags: 'timeout' })).message).toMatch(/set: flags must be an array \(\["timeout"\], not "timeout"\), not the string "timeout"/);
    expect(refusal(set({ timeout: '5s' })).message).toMatch(/set: timeout must be a number, not the string "5s"/);
    expect(refusal(set({ timeout: 1.5 })).message).toMatch(/set timeout must be a whole number of milliseconds, not number 1.5/);
    expect(refusal(set({ flag: ['timeout'] })).message).toMatch(/set has an unknown field "flag" \(known: family, table, name, key, data, typeof, flags/);
    expect(refusal({ rule: { family: 'inet', table: 't', chain: 'c', exprs: [], comments: 'x' } }).message).toMatch(/rule has an unknown field "comments"/);
    expect(refusal({ rule: { family: 'inet', table: 't', chain: 'c', exprs: ['accept'] } }).message).toMatch(/rule expression 0 must be an expression object with a type/);
    expect(refusal({ chain: { family: 'inet', table: 't', name: 'c', base: { type: 'filter', hook: 'input' } } }).message).toMatch(/chain base has no priority/);
    expect(refusal({ table, chain: { family: 'inet', table: 't', name: 'c' } }).message).toMatch(/expected exactly one of table, chain, rule, set, object, flowtable \(got table and chain\)/);
    expect(refusal('table').message).toMatch(/expected \{ table \}, \{ chain \}, \{ rule \}, \{ set \} or \{ set, elements \}, not the string "table"/);
    expect(refusal('table').operation).toBeUndefined();
  });

  it('elements queued into a set given with names for types are refused with the reason', () => {
    const named = { family: 'inet', table: 't', name: 's', key: ['ipv4_addr'] };
    expect(refusal({ set: named, elements: [{ key: ['198.18.0.1'] }] }).message).toMatch(/set key field 0 is not a data type \("ipv4_addr"\): use the library's types, such as types.ipv4_addr/);
  });

  it('an element timeout in a set without the timeout flag is refused before sending', () => {
    const plain: NftSet = { family: 'inet', table: 't', name: 'block', key: [types.ipv4_addr] };
    const err = refusal({ set: plain, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'], timeout: 5000 }] });
    expect(err.message).toBe("nftlink: add element inet t block: element 1 of set block has a timeout, but set block has no timeout flag (declare it with flags: ['timeout'])");
    expect(err.operation).toMatchObject({ verb: 'add', kind: 'element', set: plain });
    // With the flag, declared in the transaction or on the object, it is taken.
    const tx = new Transaction().add({ table }).add({ set: { ...plain, flags: ['timeout'] } });
    expect(() => tx.add({ set: plain, elements: [{ key: ['198.18.0.2'], timeout: 5000 }] })).not.toThrow();
    expect(refusal({ set: { ...plain, flags: ['timeout'] }, elements: [{ key: ['198.18.0.2'], timeout: '5s' }] }).message).toMatch(
      /element 0 of set block: timeout must be a number, not the string "5s"/,
    );
  });

  it('an element operation on a set whose types are unknown names the set', () => {
    const err = refusal({ set: { family: 'inet', table: 't', name: 'elsewhere' }, elements: [{ key: ['198.18.0.1'] }] });
    expect(err.message).toMatch(/add element inet t elsewhere: add element: the types of set inet t elsewhere are unknown/);
    expect(err.operation).toMatchObject({ verb: 'add', kind: 'element', set: { name: 'elsewhere' } });
  });

  it('a dump of the fake serialises with JSON.stringify, as the kernel\'s does', async () => {
    const fake = new FakeNftables();
    await fake.commit(
      new Transaction()
        .add({ table })
        .add({ chain: { family: 'inet', table: 't', name: 'c' } })
        .add({ rule: rule('inet').match(tcp.dport, 22).counter().accept().rule('t', 'c') }),
    );
    const json = JSON.parse(JSON.stringify(await fake.dump())) as { rules: { exprs: Record<string, unknown>[] }[] };
    expect(json.rules[0]!.exprs).toContainEqual({ type: 'cmp', sreg: 1, op: 'eq', data: '0x0016' });
    expect(json.rules[0]!.exprs).toContainEqual({ type: 'counter' });
  });

  it('commit() of something other than a transaction says so', async () => {
    await expect(new FakeNftables().commit({} as never)).rejects.toThrow(/commit\(\): expected a Transaction \(new Transaction\(\) or nft.transaction\(\)\), not an object/);
  });
});

describe('rule builder arguments', () => {
  it('name the call, the argument and what it takes', () => {
    expect(() => rule('inet').match(tcp.dport, 'http')).toThrow(/inet_service: "http" is not a number from 0 to 65535/);
    expect(() => rule('inet').match(meta.l4proto, 'tcpp')).toThrow(/inet_proto: "tcpp" is not one of: icmp, igmp, tcp, .* \(or a number\)/);
    expect(() => rule('inet').match(undefined as never, 80)).toThrow(/match\(\): the field must be one of the library's fields \(ip.saddr, tcp.dport/);
    expect(() => rule('inet').match(tcp.dport, { port: 80 } as never)).toThrow(/tcp dport: the value must be a inet_service \(a string or number\) or a non-empty list of them, not an object/);
    expect(() => rule('inet').match(tcp.dport, 80, '==' as never)).toThrow(/tcp dport: the comparison must be one of: eq, neq, lt, lte, gt, gte, not the string "=="/);
    expect(() => rule('inet').limit('10' as never, 'second')).toThrow(/limit\(\): the rate must be an integer from 1 to/);
    expect(() => rule('inet').limit(10, 'fortnight' as never)).toThrow(/limit\(\): the period must be one of: second, minute, hour, day, week/);
    expect(() => rule('inet').limit(10, 'second', { brust: 5 } as never)).toThrow(/limit\(\) options has an unknown field "brust" \(known: burst, over, bytes\)/);
    expect(() => rule('inet').log({ prefix: 5 } as never)).toThrow(/log\(\) options: prefix must be a string, not number 5/);
    expect(() => rule('inet').dynset('update', 'seen', ip.saddr, { timeoutMs: '5s' } as never)).toThrow(/dynset\(\) options: timeoutMs must be a number, not the string "5s"/);
    expect(() => rule('inet').jump(7 as never)).toThrow(/jump\(\): the chain name must be a non-empty string, not number 7/);
    expect(() => rule('ip').dnat({ family: 'ipv4', addr: '198.18.0.1' } as never)).toThrow(/dnat\(\): family must be ip or ip6, not the string "ipv4"/);
    expect(() => rule('ip').masquerade({ flags: ['randm'] } as never)).toThrow(/nat flag the string "randm" is not one of: random, fully-random, persistent/);
    expect(() => numgen('rand' as never, 2)).toThrow(/numgen\(\): the mode must be random or inc/);
    expect(() => rule('ip').match(ip6.saddr, '2001:db8::1')).toThrow(/ip6 saddr: a ip6 field in a ip table/);
  });

  it('host firewall fields compile as nft compiles them (render shows the text)', () => {
    const text = (r: ReturnType<typeof rule>) => new Transaction().add({ rule: r.rule('t', 'c') }).render().trim().replace('add rule inet t c ', '');
    expect(text(rule('inet').match(icmp.type, 'echo-request').accept())).toBe('icmp type echo-request accept');
    expect(text(rule('inet').match(icmpv6.type, ['nd-neighbor-solicit', 'nd-router-advert']).accept())).toBe('icmpv6 type { nd-router-advert, nd-neighbor-solicit } accept');
    expect(text(rule('inet').match(icmp.type, 'destination-unreachable').match(icmp.code, 'port-unreachable'))).toBe('icmp type destination-unreachable icmp code port-unreachable');
    expect(text(rule('inet').matchMasked(tcp.flags, 'syn|ack', 'syn').drop())).toBe('tcp flags syn / syn,ack drop');
    expect(text(rule('inet').match(tcp.flags, 'syn,rst'))).toBe('tcp flags syn,rst');
    expect(text(rule('inet').match(ip.dscp, 'cs1').match(ip.ttl, 64))).toBe('ip dscp cs1 ip ttl 64');
    expect(text(rule('inet').match(ip6.dscp, 'ef').match(ip6.hoplimit, 255))).toBe('ip6 dscp ef ip6 hoplimit 255');
    expect(text(rule('inet').match(meta.l4proto, 'ipv6-icmp').match(th.dport, 53))).toBe('meta l4proto ipv6-icmp th dport 53');
  });
});

describe('JSON of what a dump holds', () => {
  it('bigints as numbers (decimal strings past 2^53), bytes as hex, types by name', async () => {
    const { jsonReplacer } = await import('../../src/nft/render/json.js');
    const value = { packets: 12n, bytes: 2n ** 60n, data: Uint8Array.of(1, 255), key: [types.ipv4_addr, types.inet_service] };
    expect(JSON.parse(JSON.stringify(value, jsonReplacer))).toEqual({ packets: 12, bytes: '1152921504606846976', data: '0x01ff', key: ['ipv4_addr', 'inet_service'] });
  });
});

describe('transaction options', () => {
  it('expectedBytes sizes the buffer only: the request is the same bytes; a wrong value is named', () => {
    const build = (tx: Transaction): Uint8Array => {
      tx.add({ table }).add({ chain: { family: 'inet', table: 't', name: 'c' } });
      for (let i = 0; i < 200; i++) tx.add({ rule: rule('inet').match(tcp.dport, 1000 + i).accept().rule('t', 'c') });
      return tx.encode().buffer;
    };
    const plain = build(new Transaction());
    expect(build(new Transaction({ expectedBytes: plain.length }))).toEqual(plain);
    expect(build(new Transaction({ expectedBytes: 16 }))).toEqual(plain);
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 31, '4096']) {
      expect(() => new Transaction({ expectedBytes: bad as number })).toThrow(new TypeError(`nftlink: Transaction: expectedBytes must be an integer from 0 to 1073741824, not ${String(bad)}`));
    }
  });
});
