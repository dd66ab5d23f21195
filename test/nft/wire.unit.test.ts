// The request and dump formats are the same: a transaction encoded and read back as if the kernel
// had returned it gives the same objects. No kernel needed.

import { describe, expect, it } from 'vitest';
import { meta, numgen, renderRuleset, rule, Transaction, types } from '../../src/index.js';
import type { NftSet } from '../../src/index.js';
import { setUdata } from '../../src/nft/netlink/encode.js';
import { RulesetModel } from '../../src/nft/model.js';
import { decodeRuleset } from '../../src/nft/netlink/decode.js';
import { WireReader } from '../../src/nft/netlink/decode/wire-reader.js';
import { WireWriter } from '../../src/nft/netlink/encode/wire-writer.js';
import { WIRE_MAGIC } from '../../src/nft/netlink/wire-format.js';
import { FIXTURES } from '../fixtures/index.js';
import { kubeProxyShape } from '../fixtures/kube-proxy-shape.js';

describe('compact wire format', () => {
  it.each(FIXTURES)('%s: encode then decode gives back the same ruleset', (_n, build) => {
    const tx = build();
    const decoded = decodeRuleset(tx.encode().buffer);
    expect(renderRuleset(decoded)).toBe(renderRuleset(new RulesetModel({ kernelDefaults: false }).apply(tx.operations).ruleset()));
  });

  it('writes the header, counts and flags the addon expects', () => {
    const tx = kubeProxyShape('ip');
    const { buffer, origins } = tx.encode({ check: true, generation: 42 });
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    expect(view.getUint32(0, true)).toBe(WIRE_MAGIC);
    expect(view.getUint16(6, true)).toBe(3);
    expect(view.getUint32(8, true)).toBe(42);
    expect(view.getUint32(12, true)).toBe(origins.length);
    // Inline sets add wire operations, but each maps back to the caller's operation.
    expect(origins.length).toBeGreaterThan(tx.size);
    expect(Math.max(...Array.from({ length: origins.length }, (_, i) => origins.op(i)!))).toBe(tx.size - 1);
  });

  it('writes names as UTF-8, ASCII or not, and reads them back', () => {
    for (const name of ['service-ABCD1234-ns/svc/tcp/http', 'caf\u00e9-\u65e5\u672c-\u{1f600}', 'a\u00e9']) {
      const w = new WireWriter(16);
      w.openList();
      w.attrStr(7, name);
      w.closeList();
      const bytes = w.finish();
      const utf8 = new TextEncoder().encode(name);
      // u16 count, then u16 id, u32 length (with the NUL), the bytes and the NUL.
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      expect(view.getUint16(2, true)).toBe(7);
      expect(view.getUint32(4, true)).toBe(utf8.length + 1);
      expect([...bytes.subarray(8, 8 + utf8.length)]).toEqual([...utf8]);
      expect(bytes[8 + utf8.length]).toBe(0);
    }
  });

  it('an operation that fails to encode leaves nothing behind', () => {
    const tx = kubeProxyShape('ip');
    const before = tx.encode().buffer.length;
    expect(() => tx.add({ set: { family: 'ip', table: 'kube-proxy', name: 'cluster-ips' }, elements: [{ key: ['198.18.0.1'] }, { key: ['nope'] }] })).toThrow();
    expect(tx.encode().buffer.length).toBe(before);
  });

  it('a frozen expression shared by many rules is encoded once and copied: the same bytes as unshared copies', () => {
    const build = (i: number) =>
      rule('ip')
        .match(meta.l4proto, 'tcp')
        .dnatMap({ family: 'ip', key: numgen('random', 5, (i % 3) * 5), map: { name: 'eps' } })
        .rule('t', `svc-${i}`);
    const rules = Array.from({ length: 6 }, (_, i) => build(i));
    // The builder shares the recurring expressions (frozen): rules 0 and 3 have the same numgen.
    expect(rules[3]!.exprs.every((e, j) => e === rules[0]!.exprs[j] && Object.isFrozen(e))).toBe(true);
    const unshared = rules.map((r) => ({ ...r, exprs: r.exprs.map((e) => ({ ...e })) }));
    const encode = (rs: typeof rules) => {
      const tx = new Transaction().add({ table: { family: 'ip', name: 't' } });
      for (const r of rs) tx.add({ chain: { family: 'ip', table: 't', name: r.chain } }).add({ rule: r });
      return Buffer.from(tx.encode().buffer);
    };
    expect(encode(rules).equals(encode(unshared))).toBe(true);
    // Encoded again (from the cache this time), still the same.
    expect(encode(rules).equals(encode(unshared))).toBe(true);
  });

  it('the reader refuses truncated replies with a clear error', () => {
    const w = new WireWriter();
    w.header(0, 0);
    const buf = w.finish();
    expect(() => new WireReader(buf.subarray(0, 10)).message()).toThrow(/truncated reply from the addon at byte 8/);
  });
});

describe('set userdata', () => {
  // Bytes nft 1.0.6 wrote for `map eps { typeof numgen random mod 5 : ip daddr . tcp dport }`
  // (read back with `nft --debug=netlink`); nft lists the map with typeof only if they match.
  it('a typeof map carries the key and data expressions exactly as nft writes them', () => {
    const eps: NftSet = {
      family: 'ip', table: 't', name: 'eps', key: [types.integer(4, 'host')], data: [types.ipv4_addr, types.inet_service],
      typeof: { key: [{ expr: 'numgen', mode: 'random', modulus: 5 }], data: [{ expr: 'payload', protocol: 'ip', field: 'daddr' }, { expr: 'payload', protocol: 'tcp', field: 'dport' }] },
    };
    expect(Buffer.from(setUdata(eps)).toString('hex')).toBe(
      '000401000000010400000000031a0004170000000112000401000000010405000000020400000000043400040d000000012c0014000407000000010c00040c00000001040c0000000114000407000000010c000408000000010402000000060400000000',
    );
    const s: NftSet = { family: 'ip', table: 't', name: 's', key: [types.ipv4_addr], typeof: { key: [{ expr: 'payload', protocol: 'ip', field: 'saddr' }] } };
    expect(Buffer.from(setUdata(s)).toString('hex')).toBe('0004020000000314000407000000010c00040c00000001040b000000');
  });
});
