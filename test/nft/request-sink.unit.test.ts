// A transaction that streams its finished operations to a sink (what Nftables.transaction() binds
// to the addon): what it feeds must be exactly the request commit() would send, in order, never
// written again; a rollback over fed parts must let go of the sink. No kernel here: the kernel
// side is test/nft/errors.kernel.test.ts ("transactions bound to a connection") and the addon's
// test/native/commit-stream.kernel.test.ts ("streamed commits").
import { describe, expect, it } from 'vitest';
import type { RequestSink } from '../../src/nft/netlink/encode.js';
import { NftValidationError, Transaction, types, type NftSet, type SetElement } from '../../src/index.js';

const { ipv4_addr, inet_proto, inet_service } = types;
const map: NftSet = { family: 'ip', table: 't', name: 'm', key: [ipv4_addr, inet_proto, inet_service], data: [ipv4_addr, inet_service] };
const addr = (i: number): string => `198.18.${(i >> 8) & 255}.${i & 255}`;

function* elements(n: number, badAt = -1, port = 80): Generator<SetElement> {
  for (let i = 0; i < n; i++) yield { key: [i === badAt ? 'not-an-address' : addr(i), 'tcp', port], value: [addr(i + 1), 8080] };
}

/** Records every part, a copy taken when it was fed beside the array it was fed in. */
class RecordingSink implements RequestSink {
  parts: Array<{ part: Uint8Array; copy: Uint8Array; operations: number }> = [];
  cancelled = 0;
  feed(part: Uint8Array, operations: number): void {
    this.parts.push({ part, copy: part.slice(), operations });
  }
  cancel(): void {
    this.cancelled++;
  }
  bytes(): Uint8Array {
    return Buffer.concat(this.parts.map((p) => p.copy));
  }
  operations(): number {
    return this.parts.reduce((n, p) => n + p.operations, 0);
  }
  untouched(): boolean {
    return this.parts.every((p) => Buffer.compare(p.part, p.copy) === 0);
  }
}

const HEADER = 16;

describe('a transaction streaming to a sink', () => {
  it('feeds a long element list while it is read, and in all exactly the request commit() sends', () => {
    const sink = new RecordingSink();
    const tx = new Transaction().streamTo(sink);
    tx.add({ table: { family: 'ip', name: 't' } }).add({ set: map });
    let fedWhileReading = 0;
    function* counted(): Generator<SetElement> {
      for (const e of elements(100_000)) {
        fedWhileReading = sink.parts.length;
        yield e;
      }
    }
    tx.add({ set: map, elements: counted() });
    // Parts went out before the list ended: ~3.6 MB in parts of 128 KiB.
    expect(fedWhileReading).toBeGreaterThan(20);
    expect(tx.endStream()).toBe(sink);
    const req = tx.encode();
    expect(Buffer.compare(sink.bytes(), req.buffer.subarray(HEADER))).toBe(0);
    expect(sink.operations()).toBe(req.origins.length);
    expect(sink.untouched()).toBe(true);
    // The list became operations of about 32 KiB, each naming the caller's elements from its first on.
    expect(req.origins.length).toBeGreaterThan(100);
    const last = req.origins.length - 1;
    expect(req.origins.op(last)).toBe(2);
    expect(req.origins.callerElement(2, 0)).toBe(0);
    expect(req.origins.callerElement(last, 0)).toBeGreaterThan(99_000);
    // Read back, the streamed operation holds every element, in order.
    const op = tx.operation(2);
    expect(op.kind === 'element' && op.elements.length).toBe(100_000);
    expect(op.kind === 'element' && op.elements[76_543]).toEqual({ key: [addr(76_543), 'tcp', 80], value: [addr(76_544), 8080] });
    // Ended: nothing more goes to the sink; a later operation is only in the request.
    tx.add({ chain: { family: 'ip', table: 't', name: 'later' } });
    expect(sink.operations()).toBe(req.origins.length);
    expect(tx.endStream()).toBeUndefined();
    expect(tx.operation(3)).toMatchObject({ kind: 'chain', chain: { name: 'later' } });
  });

  it('a rollback over fed parts lets go of the sink, writes nothing over them, and leaves the transaction as without the operation', () => {
    const sink = new RecordingSink();
    const tx = new Transaction().streamTo(sink);
    tx.add({ table: { family: 'ip', name: 't' } }).add({ set: map });
    expect(() => tx.add({ set: map, elements: elements(100_000, 60_000) })).toThrow(NftValidationError);
    expect(sink.parts.length).toBeGreaterThan(10);
    expect(sink.cancelled).toBe(1);
    expect(tx.endStream()).toBeUndefined();
    // Other bytes over the same offsets: written over the fed parts, they would show.
    tx.add({ set: map, elements: elements(100_000, -1, 81) });
    expect(sink.untouched()).toBe(true);
    const plain = new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ set: map }).add({ set: map, elements: elements(100_000, -1, 81) });
    expect(Buffer.compare(tx.encode().buffer, plain.encode().buffer)).toBe(0);
    expect(tx.size).toBe(3);
  });

  it('a rollback that stays after the fed parts keeps the sink', () => {
    const sink = new RecordingSink();
    const tx = new Transaction().streamTo(sink);
    tx.add({ table: { family: 'ip', name: 't' } }).add({ set: map }).add({ set: map, elements: elements(20_000) });
    const fed = sink.operations();
    expect(fed).toBeGreaterThan(0);
    expect(() => tx.add({ set: map, elements: [{ key: ['198.18.0.1', 'tcp', 70_000], value: ['198.18.0.2', 80] }] })).toThrow(NftValidationError);
    expect(sink.cancelled).toBe(0);
    expect(tx.endStream()).toBe(sink);
    expect(Buffer.compare(sink.bytes(), tx.encode().buffer.subarray(HEADER))).toBe(0);
  });

  it('an unbound transaction keeps a long element list in one operation', () => {
    const tx = new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ set: map }).add({ set: map, elements: elements(100_000) });
    expect(tx.encode().origins.length).toBe(3);
  });

  it('a transaction that never filled a part feeds nothing: the whole request is sent as it is', () => {
    const sink = new RecordingSink();
    const tx = new Transaction().streamTo(sink).add({ table: { family: 'ip', name: 't' } }).add({ set: map, elements: elements(500) });
    expect(tx.endStream()).toBeUndefined();
    expect(sink.parts).toHaveLength(0);
    expect(tx.encode().origins.length).toBe(2);
  });

  it('a sink that throws is dropped: the request stays whole', () => {
    let calls = 0;
    const failing: RequestSink = {
      feed() {
        calls++;
        throw new Error('gone');
      },
      cancel() {},
    };
    const tx = new Transaction().streamTo(failing).add({ table: { family: 'ip', name: 't' } }).add({ set: map }).add({ set: map, elements: elements(20_000) });
    expect(calls).toBe(1);
    expect(tx.endStream()).toBeUndefined();
    // The list that was being fed stays cut where a bound transaction cuts it.
    const quiet = new Transaction().streamTo({ feed() {}, cancel() {} });
    quiet.add({ table: { family: 'ip', name: 't' } }).add({ set: map }).add({ set: map, elements: elements(20_000) });
    expect(Buffer.compare(tx.encode().buffer, quiet.encode().buffer)).toBe(0);
    const op = tx.operation(2);
    expect(op.kind === 'element' && op.elements.length).toBe(20_000);
  });
});
