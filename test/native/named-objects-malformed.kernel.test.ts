// Named objects (kind 6) and flowtables (kind 7) in the compact format: the addon checks each
// typed attribute against its object type's libnftnl field before libnftnl sees it, refuses what
// would be silently dropped or read past, and sends a well-formed object. In a fresh namespace.
import { describe, expect, it } from "vitest";

import { cstr, decode, encode, NFPROTO_IPV4, type Op, str, tableOp, u16v, u32v, u8v } from "./compact-format.js";
import { native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

const NEWOBJ = 18;
const u64v = (n: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n, true);
  return b;
};
const obj = (type: number | undefined, typed: [number, Uint8Array][], name = "o"): Op => ({
  msgType: NEWOBJ,
  kind: 6,
  nlFlags: 0x400,
  family: NFPROTO_IPV4,
  attrs: [[0, str("m")], [1, str(name)], ...(type === undefined ? [] : ([[2, u32v(type)]] as [number, Uint8Array][])), ...typed],
});

describe("native addon: named objects and flowtables", () => {
  const { h } = withNamespace();

  async function expectRejected(op: Op, re: RegExp) {
    await expect(native().commit(h(), encode([tableOp("m"), op]))).rejects.toThrow(re);
  }

  it("refuses typed attributes without a type, of an unknown type, out of the type's range or of the wrong size", async () => {
    await expectRejected(obj(undefined, [[16, u64v(1n)]]), /object attribute 16 depends on the object's type, and the object has none/);
    await expectRejected(obj(6, []), /object type 6 is not one nftlink sends/);
    await expectRejected(obj(1, [[18, u64v(1n)]]), /object attribute 18 is not defined for a counter \(ids 16\.\.17\)/);
    await expectRejected(obj(1, [[16, u32v(1)]]), /counter attribute 16 \(packets\) is 4 bytes, must be exactly 8/);
    await expectRejected(obj(3, [[16, str("a-helper-name-too-long")], [17, u16v(2)], [18, u8v(6)]]), /ct helper name is 22 bytes, at most 15/);
    await expectRejected(obj(7, [[16, u16v(2)], [17, u8v(6)], [18, new Uint8Array(8)]]), /ct timeout attribute 18 \(array\) is 8 bytes, must be exactly 44/);
    await expectRejected(obj(1, [[7, u32v(1)]]), /object attribute 7 \(unused\) is not defined in libnftnl/);
    await expectRejected({ ...obj(1, []), msgType: 9 }, /message type 9 is not a object verb/);
    await expectRejected({ ...obj(1, []), kind: 5 }, /has unknown kind 5/);
    await expectRejected(
      { msgType: 22, kind: 7, family: NFPROTO_IPV4, attrs: [[2, str("m")], [0, str("f")], [6, new TextEncoder().encode("eth0")]] },
      /flowtable attribute 6 \(devices\) does not end with a NUL/,
    );
  });

  it("sends a well-formed object, typed attributes given before the type included", async () => {
    const counter = obj(1, []);
    // The type last: the addon sets it first, or libnftnl would drop the counts.
    counter.attrs = [[0, str("m")], [1, str("c")], [16, u64v(7n)], [17, u64v(700n)], [2, u32v(1)]];
    const res = await native().commit(h(), encode([tableOp("m"), counter]));
    expect(res.errors).toEqual([]);
    const [dumped] = decode(await native().dump(h(), 32, 0, "m")).ops;
    expect(dumped?.kind).toBe(6);
    expect(cstr(dumped?.attrs.get(1))).toBe("c");
    const u64 = (b: Uint8Array | undefined) => (b ? new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true) : undefined);
    expect([u64(dumped?.attrs.get(16)), u64(dumped?.attrs.get(17))]).toEqual([7n, 700n]);
  });

  it("survives 1500 random mutations of a valid request of objects of every type and a flowtable", async () => {
    const typed: [number, [number, Uint8Array][]][] = [
      [1, [[16, u64v(1n)], [17, u64v(2n)]]],
      [2, [[16, u64v(1000n)], [17, u64v(0n)], [18, u32v(1)]]],
      [3, [[16, str("ftp")], [17, u16v(2)], [18, u8v(6)]]],
      [4, [[16, u64v(10n)], [17, u64v(60n)], [18, u32v(5)], [19, u32v(0)], [20, u32v(0)]]],
      [7, [[16, u16v(2)], [17, u8v(6)], [18, new Uint8Array(44).fill(1)]]],
      [9, [[16, u16v(2)], [17, u8v(6)], [18, u16v(5000)], [19, u32v(1000)], [20, u8v(3)]]],
      [10, [[16, u16v(1460)], [17, u8v(7)], [18, u32v(3)]]],
    ];
    const flowtable: Op = { msgType: 22, kind: 7, nlFlags: 0x400, family: NFPROTO_IPV4, attrs: [[2, str("m")], [0, str("f")], [3, u32v(0)], [4, u32v(0)], [6, str("lo")]] };
    const base = encode([tableOp("m"), ...typed.map(([type, attrs], i) => obj(type, attrs, `o${i}`)), flowtable]);
    for (let i = 0; i < 1500; i++) {
      const m = base.slice();
      const flips = 1 + Math.floor(Math.random() * 4);
      for (let f = 0; f < flips; f++) {
        const at = Math.floor(Math.random() * m.length);
        m[at] = Math.random() < 0.5 ? Math.floor(Math.random() * 256) : m[at]! ^ (1 << Math.floor(Math.random() * 8));
      }
      try {
        const r = await native().commit(h(), m);
        expect(Array.isArray(r.errors)).toBe(true);
      } catch (e) {
        expect((e as Error).message).toMatch(/^nftlink: /);
      }
    }
    expect(typeof (await native().getGeneration(h()))).toBe("number");
  });
});
