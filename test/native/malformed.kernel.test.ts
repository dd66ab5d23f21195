// Malformed compact requests (truncations, wrong lengths, ids, names, kinds, random bytes and
// mutations) are rejected with the reason and never crash the addon. In a fresh network namespace.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";

import { accept, cmpEq, E, encode, ip4, must, NFPROTO_IPV4, type Op, R, ruleOp, saddr, str, tableOp, u16v, u32v, u8v, elemsOp, setOp } from "./compact-format.js";
import { native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

describe("native addon: malformed requests never crash", () => {
  const { h } = withNamespace();
  const valid = () =>
    encode([
      tableOp("m"),
      {
        msgType: 6,
        kind: 2,
        family: NFPROTO_IPV4,
        attrs: [
          [R.TABLE, str("m")],
          [R.CHAIN, str("c")],
        ],
        exprs: [saddr, cmpEq(ip4(3)), accept],
      },
    ]);

  async function expectRejected(buf: Uint8Array, re: RegExp = /nftlink: malformed transaction at byte \d+: /) {
    await expect(native().commit(h(), buf)).rejects.toThrow(re);
  }

  it("rejects every truncation of a valid buffer", async () => {
    const buf = valid();
    for (let len = 0; len < buf.length; len++) await expectRejected(buf.slice(0, len));
  });

  it("rejects wrong lengths, ids, names, kinds and trailing bytes with the reason", async () => {
    const one = (op: Op) => encode([op]);
    await expectRejected(
      one({ ...tableOp(), attrs: [[2 /* flags */, Uint8Array.of(1, 2, 3)]] }),
      /table attribute 2 \(flags\) is 3 bytes, must be exactly 4/,
    );
    await expectRejected(
      one({ ...tableOp(), attrs: [[7, u32v(0)]] }),
      /table attribute 7 is past the maximum id 6/,
    );
    await expectRejected(
      one({ ...tableOp(), attrs: [[0, new TextEncoder().encode("no-nul")]] }),
      /table attribute 0 \(name\) is not NUL-terminated/,
    );
    await expectRejected(
      one({ ...tableOp(), attrs: [[0, new Uint8Array(300).fill(65).fill(0, 299)]] }),
      /is 300 bytes, at most 256/,
    );
    await expectRejected(
      one(ruleOp("c", [{ name: "cmp", attrs: [[3, new Uint8Array(80)]] }])),
      /cmp attribute 3 \(data\) is 80 bytes, at most 64/,
    );
    await expectRejected(one(ruleOp("c", [{ name: "payload", attrs: [[1, u16v(1)]] }])), /must be exactly 4/);
    await expectRejected(one(ruleOp("c", [{ name: "ct", attrs: [[3, u32v(1)]] }])), /ct attribute 3 \(dir\) is 4 bytes, must be exactly 1/);
    await expectRejected(one(ruleOp("c", [{ name: "log", attrs: [[2, u8v(1)]] }])), /log attribute 2 \(group\)/);
    await expectRejected(one(ruleOp("c", [{ name: "bogus", attrs: [] }])), /unknown expression "bogus"/);
    await expectRejected(one(ruleOp("c", [{ name: "match", attrs: [] }])), /expression "match" needs its extension's name \(attribute 1\) and info \(attribute 3\)/);
    const xt = (name: string, attrs: [number, Uint8Array][]) => one(ruleOp("c", [{ name, attrs }]));
    await expectRejected(xt("match", [[1, str("m".repeat(29))], [3, new Uint8Array(8)]]), /match attribute 1 \(name\) is 30 bytes, at most 29 with its NUL/);
    await expectRejected(xt("target", [[1, str("LOG")], [3, new Uint8Array(0)]]), /target attribute 3 \(info\) is empty, needs 1 to 65531 bytes/);
    await expectRejected(xt("target", [[1, str("LOG")], [3, new Uint8Array(65532)]]), /target attribute 3 \(info\) is 65532 bytes, at most 65531/);
    await expectRejected(xt("match", [[1, str("comment")], [2, u16v(0)], [3, new Uint8Array(256)]]), /match attribute 2 \(rev\) is 2 bytes, must be exactly 4/);
    // Within the attribute's limit but past what the rule's expression list nest holds.
    await expectRejected(xt("match", [[1, str("comment")], [3, new Uint8Array(65531)]]), /may need \d+ bytes, more than the 65535 of a netlink nest/);
    await expectRejected(
      one(ruleOp("c", [{ name: "dynset", attrs: [[7, u32v(0)]] }])),
      /dynset attribute 7 \(expr\) is a libnftnl object pointer/,
    );
    await expectRejected(
      one(ruleOp("c", [{ name: "cmp", attrs: [], exprs: [accept] }])),
      /only a top-level dynset may have them/,
    );
    await expectRejected(one({ ...setOp("x", 7, 4, 9), attrs: [[16, Uint8Array.of(4, 0)]] }), /concat\) field length 1 is zero/);
    await expectRejected(one({ ...setOp("x", 7, 4, 9), attrs: [[17, new Uint8Array(8)]] }), /object pointer/);
    await expectRejected(
      one({ ...elemsOp("s", [ip4(1)]), attrs: [[2, u32v(0)]] }),
      /does not name a set/,
    );
    await expectRejected(
      one({ ...elemsOp("s", []), elems: [{ attrs: [[E.KEY, new Uint8Array(65)]] }] }),
      /element attribute 1 \(key\) is 65 bytes, at most 64/,
    );
    await expectRejected(one({ ...tableOp(), kind: 9 }), /unknown kind 9/);
    await expectRejected(one({ ...tableOp(), msgType: 3 }), /message type 3 is not a table verb/);
    await expectRejected(one({ ...tableOp(), nlFlags: 0x4 }), /NLM_F_ACK is never needed/);
    await expectRejected(one({ ...tableOp(), attrs: [[0, str("a")], [0, str("b")]] }), /given twice/);
    const trailing = new Uint8Array(valid().length + 3);
    trailing.set(valid());
    await expectRejected(trailing, /3 trailing bytes/);
    const badMagic = valid();
    badMagic[0] = must(badMagic[0]) ^ 0xff;
    await expectRejected(badMagic, /magic/);
    const bigCount = valid();
    new DataView(bigCount.buffer).setUint32(12, 0xffffffff, true);
    await expectRejected(bigCount, /declares 4294967295 operations/);
    await expect(native().commit(h(), "nope" as unknown as Uint8Array)).rejects.toThrow(TypeError);
    await expect(native().commit(h(), new Uint16Array(8) as unknown as Uint8Array)).rejects.toThrow(TypeError);
  });

  it("survives random bytes and 2000 random mutations of a valid buffer", async () => {
    for (let i = 0; i < 300; i++) {
      const buf = randomBytes(Math.floor(Math.random() * 200));
      if (i % 2 === 0 && buf.length >= 8) buf.writeUInt32LE(0x4c54464e, 0), buf.writeUInt16LE(1, 4);
      await expect(native().commit(h(), new Uint8Array(buf))).rejects.toBeInstanceOf(Error);
    }
    const base = valid();
    let resolved = 0;
    for (let i = 0; i < 2000; i++) {
      const m = base.slice();
      const flips = 1 + Math.floor(Math.random() * 4);
      for (let f = 0; f < flips; f++) {
        const at = Math.floor(Math.random() * m.length);
        m[at] = Math.random() < 0.5 ? Math.floor(Math.random() * 256) : must(m[at]) ^ (1 << Math.floor(Math.random() * 8));
      }
      try {
        const r = await native().commit(h(), m);
        expect(Array.isArray(r.errors)).toBe(true);
        resolved++;
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
        expect((e as Error).message).toMatch(/^nftlink: /);
      }
    }
    // the handle still works afterwards
    expect(typeof (await native().getGeneration(h()))).toBe("number");
    expect(resolved).toBeGreaterThanOrEqual(0);
  }, 60_000);
});
