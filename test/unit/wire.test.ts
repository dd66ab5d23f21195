// The request and dump formats are the same: a transaction encoded and read back as if the kernel
// had returned it gives the same objects. No kernel needed.

import { describe, expect, it } from 'vitest';
import { renderRuleset } from '../../src/index.js';
import { RulesetModel } from '../../src/nft/model.js';
import { decodeRuleset } from '../../src/nft/netlink/decode.js';
import { WireReader, WireWriter, WIRE_MAGIC } from '../../src/nft/netlink/wire.js';
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
    expect(Math.max(...origins.map((o) => o.op))).toBe(tx.size - 1);
  });

  it('an operation that fails to encode leaves nothing behind', () => {
    const tx = kubeProxyShape('ip');
    const before = tx.encode().buffer.length;
    expect(() => tx.add({ set: { family: 'ip', table: 'kube-proxy', name: 'cluster-ips' }, elements: [{ key: ['198.18.0.1'] }, { key: ['nope'] }] })).toThrow();
    expect(tx.encode().buffer.length).toBe(before);
  });

  it('the reader refuses truncated replies with a clear error', () => {
    const w = new WireWriter();
    w.header(0, 0);
    const buf = w.finish();
    expect(() => new WireReader(buf.subarray(0, 10)).message()).toThrow(/truncated reply from the addon at byte 8/);
  });
});
