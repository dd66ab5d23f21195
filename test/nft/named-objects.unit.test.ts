// Named objects, flowtables and ingress chain devices without a kernel: encoded into the compact
// format and read back (a request and a dump share one format), rendered as nft text, refused with
// a reason that names the object and the field, and applied by the fake.

import { describe, expect, it } from 'vitest';
import { ip, NftCommitError, renderRuleset, rule, Transaction, types } from '../../src/index.js';
import type { Flowtable, NftObject, NftSet } from '../../src/index.js';
import { decodeRuleset } from '../../src/nft/netlink/decode/ruleset-decoder.js';
import { FakeNftables } from '../../src/testing/index.js';

const t = { family: 'inet', table: 'u' } as const;
const EVERY_TYPE: NftObject[] = [
  { ...t, name: 'c', type: 'counter', packets: 3n, bytes: 180n, comment: 'three' },
  { ...t, name: 'q', type: 'quota', bytes: 5000n, used: 100n, over: true },
  { ...t, name: 'l', type: 'limit', rate: 400, per: 'hour', burst: 7, unit: 'bytes', over: true },
  { ...t, name: 'h', type: 'ct helper', helper: 'sip', protocol: 'udp', l3proto: 'ip6' },
  { ...t, name: 'to', type: 'ct timeout', protocol: 'tcp', l3proto: 'ip', policy: { established: 600, retrans: 40 } },
  { ...t, name: 'e', type: 'ct expectation', protocol: 'udp', l3proto: 'ip', dport: 69, timeout: 30_000, size: 4 },
  { ...t, name: 's', type: 'synproxy', mss: 1400, wscale: 5, sackPerm: true },
  { ...t, name: 'm', type: 'secmark', context: 'system_u:object_r:http_packet_t:s0' },
];
const FT: Flowtable = { ...t, name: 'ft', hook: 'ingress', priority: -10, devices: ['eth0', 'eth1'], flags: ['counter'] };

describe('encoded and read back', () => {
  it('every object type, a flowtable, ingress chains and the rules that use them decode as written', () => {
    const tx = new Transaction().add({ table: { family: 'inet', name: 'u' } });
    for (const o of EVERY_TYPE) tx.add({ object: o });
    tx.add({ flowtable: FT });
    tx.add({ chain: { ...t, name: 'one', base: { type: 'filter', hook: 'ingress', priority: 0, devices: ['eth0'] } } });
    tx.add({ chain: { family: 'netdev', table: 'n', name: 'two', base: { type: 'filter', hook: 'ingress', priority: 5, devices: ['eth0', 'eth1'] } } });
    tx.add({ chain: { family: 'netdev', table: 'n', name: 'out', base: { type: 'filter', hook: 'egress', priority: 0, devices: ['eth1'] } } });
    tx.add({ rule: rule('inet').object('counter', 'c').object('ct helper', 'h').flowOffload('ft').rule('u', 'one') });
    const rs = decodeRuleset(tx.encode().buffer);
    expect(rs.objects).toEqual(EVERY_TYPE);
    expect(rs.flowtables).toEqual([FT]);
    expect(rs.chains.map((c) => [c.name, c.base?.hook, c.base?.devices])).toEqual([
      ['one', 'ingress', ['eth0']],
      ['two', 'ingress', ['eth0', 'eth1']],
      ['out', 'egress', ['eth1']],
    ]);
    expect(rs.rules[0]!.exprs).toEqual([
      { type: 'objref', objectType: 'counter', name: 'c' },
      { type: 'objref', objectType: 'ct helper', name: 'h' },
      { type: 'flow', flowtable: 'ft' },
    ]);
  });
});

describe('rendered as nft text', () => {
  it('objects, flowtables and devices as nft list ruleset prints them', () => {
    const text = renderRuleset({
      generation: 0,
      tables: [{ family: 'inet', name: 'u' }],
      chains: [{ ...t, name: 'one', base: { type: 'filter', hook: 'ingress', priority: 0, devices: ['eth1', 'eth0'] } }],
      sets: [],
      rules: [{ ...t, chain: 'one', exprs: rule('inet').object('quota', 'q').object('ct timeout', 'to').object('secmark', 'm').flowOffload('ft').build() }],
      objects: EVERY_TYPE,
      flowtables: [FT],
    });
    expect(text).toBe(
      [
        'table inet u {',
        '\tcounter c {',
        '\t\tpackets 3 bytes 180',
        '\t\tcomment "three"',
        '\t}',
        '',
        '\tquota q {',
        '\t\tover 5000 bytes used 100 bytes',
        '\t}',
        '',
        '\tlimit l {',
        '\t\trate over 400 bytes/hour burst 7 bytes',
        '\t}',
        '',
        '\tct helper h {',
        '\t\ttype "sip" protocol udp',
        '\t\tl3proto ip6',
        '\t}',
        '',
        '\tct timeout to {',
        '\t\tprotocol tcp',
        '\t\tl3proto ip',
        '\t\tpolicy = { established : 600, retrans : 40 }',
        '\t}',
        '',
        '\tct expectation e {',
        '\t\tprotocol udp',
        '\t\tdport 69',
        '\t\ttimeout 30s',
        '\t\tsize 4',
        '\t\tl3proto ip',
        '\t}',
        '',
        '\tsynproxy s {',
        '\t\tmss 1400',
        '\t\twscale 5',
        '\t\tsack-perm',
        '\t}',
        '',
        '\tsecmark m {',
        '\t\t"system_u:object_r:http_packet_t:s0"',
        '\t}',
        '',
        '\tflowtable ft {',
        '\t\thook ingress priority -10',
        '\t\tdevices = { eth0, eth1 }',
        '\t\tcounter',
        '\t}',
        '',
        '\tchain one {',
        '\t\ttype filter hook ingress devices = { eth0, eth1 } priority 0; policy accept;',
        '\t\tquota name "q" ct timeout set "to" meta secmark set "m" flow add @ft',
        '\t}',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('transactions render as nft -f commands', () => {
    const tx = new Transaction()
      .add({ object: EVERY_TYPE[1]! })
      .add({ flowtable: FT })
      .delete({ object: { ...t, name: 'c', type: 'counter' } })
      .destroy({ flowtable: FT });
    expect(tx.render()).toBe(
      [
        'add quota inet u q { over 5000 bytes used 100 bytes; }',
        'add flowtable inet u ft { hook ingress priority -10; devices = { eth0, eth1 }; counter; }',
        'delete counter inet u c',
        'destroy flowtable inet u ft',
        '',
      ].join('\n'),
    );
  });
});

describe('refused before sending, with the object and the field', () => {
  const refused = (add: (tx: Transaction) => void): string => {
    try {
      add(new Transaction());
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  const obj = (o: Record<string, unknown>) => (tx: Transaction) => tx.add({ object: { ...t, name: 'x', ...o } as unknown as NftObject });

  it('names the object and what the field takes', () => {
    expect(refused(obj({ type: 'counters' }))).toMatch(/object x type "counters" is not one of: counter, quota, ct helper, limit, ct timeout, secmark, ct expectation, synproxy/);
    expect(refused(obj({ type: 'quota', bytes: -1 }))).toMatch(/add quota inet u x: quota x bytes -1 is not a whole number/);
    expect(refused(obj({ type: 'limit', rate: 5, per: 'fortnight' }))).toMatch(/limit x per "fortnight" is not one of: second, minute, hour, day, week/);
    expect(refused(obj({ type: 'ct helper', helper: 'a-very-long-helper', protocol: 'tcp' }))).toMatch(/ct helper x helper "a-very-long-helper" is not a helper name of 1 to 15 bytes/);
    expect(refused(obj({ type: 'ct helper', helper: 'ftp', protocol: 'icmp' }))).toMatch(/ct helper x protocol "icmp" is not one of: tcp, udp, dccp, sctp, udplite/);
    expect(refused((tx) => tx.add({ object: { family: 'netdev', table: 'n', name: 'h', type: 'ct helper', helper: 'ftp', protocol: 'tcp' } }))).toMatch(/ct helper h in a netdev table needs its l3proto \(ip, ip6 or inet\)/);
    expect(refused(obj({ type: 'ct timeout', protocol: 'tcp', policy: { establshed: 5 } }))).toMatch(/ct timeout x policy state "establshed" is not one of: syn_sent, syn_recv, established/);
    expect(refused(obj({ type: 'synproxy', mss: 1460, wscale: 15 }))).toMatch(/synproxy x wscale 15 is not an integer from 0 to 14/);
    expect(refused(obj({ type: 'ct expectation', protocol: 'tcp', dport: 70000, timeout: 1, size: 1 }))).toMatch(/ct expectation x dport 70000 is not an integer from 0 to 65535/);
    expect(refused((tx) => tx.insert({ object: EVERY_TYPE[0]! } as never))).toMatch(/insert does not apply to named objects/);
  });

  it('refuses flowtables and chain devices nf_tables would not take', () => {
    expect(refused((tx) => tx.add({ flowtable: { ...FT, devices: ['an-interface-name-too-long'] } }))).toMatch(/flowtable ft device "an-interface-name-too-long" is not an interface name \(1 to 15 bytes\)/);
    expect(refused((tx) => tx.add({ flowtable: { ...FT, devices: ['eth0', 'eth0'] } }))).toMatch(/flowtable ft lists device eth0 twice/);
    expect(refused((tx) => tx.add({ flowtable: { ...FT, hook: 'egress' as 'ingress' } }))).toMatch(/flowtable ft hook "egress" is not ingress/);
    expect(refused((tx) => tx.flush({ flowtable: FT } as never))).toMatch(/flush does not apply to flowtables/);
    const chain = (base: Record<string, unknown>, family: 'inet' | 'netdev' = 'inet') => (tx: Transaction) => tx.add({ chain: { family, table: 'u', name: 'c', base: { type: 'filter', priority: 0, ...base } as never } });
    expect(refused(chain({ hook: 'input', devices: ['eth0'] }))).toMatch(/chain c lists devices, which only ingress and egress chains take \(hook input\)/);
    expect(refused(chain({ hook: 'ingress' }, 'netdev'))).toMatch(/netdev chain c hooks at ingress and needs its devices/);
    expect(refused(chain({ hook: 'ingress', devices: [] }))).toMatch(/chain c needs at least one device/);
    expect(refused(chain({ hook: 'prerouting', devices: ['eth0'] }, 'netdev'))).toMatch(/chain hook "prerouting" is not one of: ingress, egress/);
  });
});

describe('the fake', () => {
  it('applies objects and flowtables as the kernel does: handles, updates, refusals', async () => {
    const fake = new FakeNftables();
    await fake.commit(
      new Transaction()
        .add({ table: { family: 'inet', name: 'u' } })
        .add({ object: EVERY_TYPE[0]! })
        .add({ flowtable: { ...FT, devices: ['eth0'] } })
        .add({ chain: { ...t, name: 'fw', base: { type: 'filter', hook: 'forward', priority: 0 } } })
        .add({ rule: rule('inet').flowOffload('ft').rule('u', 'fw') }),
    );
    // An add of an existing flowtable adds its new devices.
    await fake.commit(new Transaction().add({ flowtable: FT }));
    const rs = await fake.dump();
    expect(rs.flowtables).toEqual([{ ...FT, handle: 2 }]);
    expect(rs.objects).toEqual([{ ...EVERY_TYPE[0], handle: 1 }]);
    const inUse = await fake.commit(new Transaction().delete({ flowtable: FT })).catch((e: unknown) => e);
    expect(inUse).toBeInstanceOf(NftCommitError);
    expect((inUse as NftCommitError).refusals[0]?.reason).toBe('flowtable ft is in use: a rule refers to it');
    const missing = await fake.commit(new Transaction().add({ rule: rule('inet').flowOffload('slow').rule('u', 'fw') })).catch((e: unknown) => e);
    expect((missing as NftCommitError).refusals[0]?.reason).toBe('flowtable slow (of expression 0) does not exist in table inet u');
    await fake.commit(new Transaction().delete({ table: { family: 'inet', name: 'u' } }));
    const after = await fake.dump();
    expect([after.objects, after.flowtables]).toEqual([undefined, undefined]);
  });
});

describe('objref read back from rulesets nftlink did not write', () => {
  it('the map form and unknown types decode without a type, re-encode unchanged and have no nft text', () => {
    const mapForm = { type: 'objref', set: 'cm', sreg: 1 } as const;
    // A tunnel object (NFT_OBJECT_TUNNEL 6), which nftlink does not model, as a dump reads it.
    const tunnel = { type: 'objref', name: 'tun', typeCode: 6 } as const;
    const tx = new Transaction().add({ rule: { ...t, chain: 'c', exprs: [mapForm, tunnel] } });
    const rs = decodeRuleset(tx.encode().buffer);
    expect(rs.rules[0]!.exprs).toEqual([mapForm, tunnel]);
    expect(decodeRuleset(new Transaction().add({ rule: rs.rules[0]! }).encode().buffer).rules[0]!.exprs).toEqual([mapForm, tunnel]);
    // No nft text: the renderer refuses it, or (where it prints what it cannot write raw) never
    // guesses a type's keyword for it.
    const render = (exprs: typeof rs.rules[0]['exprs']): string => {
      try {
        return renderRuleset({ generation: 0, tables: [{ family: 'inet', name: 'u' }], chains: [{ ...t, name: 'c' }], sets: [], rules: [{ ...t, chain: 'c', exprs }] });
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(render([mapForm])).not.toMatch(/(counter|quota|limit|synproxy) name|\bset .*map @cm/);
    expect(render([tunnel])).not.toMatch(/(counter|quota|limit|synproxy) name|set "tun"/);
    expect(render([{ type: 'objref', objectType: 'quota', name: 'q' }])).toContain('quota name "q"');
    expect(() => new Transaction().add({ rule: { ...t, chain: 'c', exprs: [{ type: 'objref', name: 'x' }] } })).toThrow(/objref object type undefined is not one of: counter/);
  });
});

describe('maps of named objects', () => {
  const cm = (): NftSet => ({ ...t, name: 'cm', key: [types.ipv4_addr], objects: 'counter', elements: [{ key: ['198.18.0.1'], value: ['c'] }] });

  it('encode, decode and render as nft declares them, elements naming their objects', () => {
    const tx = new Transaction().add({ set: cm() }).add({ rule: rule('inet').objectFromMap(ip.saddr, 'cm').rule('u', 'c') });
    const rs = decodeRuleset(tx.encode().buffer);
    expect(rs.sets[0]).toMatchObject({ name: 'cm', objects: 'counter', elements: [{ key: ['198.18.0.1'], value: ['c'] }] });
    const text = renderRuleset({ ...rs, tables: [{ family: 'inet', name: 'u' }], chains: [{ ...t, name: 'c' }] });
    expect(text).toContain('\tmap cm {\n\t\ttype ipv4_addr : counter\n\t\telements = { 198.18.0.1 : "c" }\n\t}');
    expect(text).toContain('counter name ip saddr map @cm');
    expect(tx.render()).toContain('add map inet u cm { type ipv4_addr : counter; elements = { 198.18.0.1 : "c" }; }');
  });

  it('refuses an element without its object name, and a map of both data and objects', () => {
    const bad = (add: () => unknown): string => {
      try {
        add();
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(bad(() => new Transaction().add({ set: { ...cm(), elements: [{ key: ['198.18.0.1'] }] } }))).toMatch(/element 0: an element of a map of counter objects needs the object's name as its value, \['name'\]/);
    expect(bad(() => new Transaction().add({ set: { ...cm(), elements: [], data: [types.ipv4_addr] } }))).toMatch(/map cm has both data and objects/);
    expect(bad(() => new Transaction().add({ set: { ...cm(), elements: [], objects: 'counters' as 'counter' } }))).toMatch(/map cm objects "counters" is not one of: counter, quota/);
  });
});
