// Rule handles through NLM_F_ECHO: the addon returns the handle of each echoed rule, as a dump
// shows it, and nothing for a refused or CHECK batch. In a fresh network namespace.
import { beforeAll, describe, expect, it } from "vitest";

import { accept, chainOp, CHECK, cmpEq, decode, elemsOp, encode, ENOENT, type Expr, hex, ip4, jump, must, NFPROTO_IPV4, type Op, R, ruleOp, saddr, str, TABLE, tableOp } from "./compact-format.js";
import { native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

describe("native addon: rule handles (NLM_F_ECHO)", () => {
  const { ns, h } = withNamespace();
  const NLM_F_ECHO = 0x8;
  const NLM_F_REPLACE = 0x100;
  const R_HANDLE = 3;
  const echoed = (op: Op): Op => ({ ...op, nlFlags: (op.nlFlags ?? 0) | NLM_F_ECHO });
  /** A rule that matches the i-th test address (so a dump tells the rules apart). */
  const addrRule = (chain: string, i: number, verdict: Expr = accept): Op => ruleOp(chain, [saddr, cmpEq(ip4(i)), verdict]);
  const leU64 = (b: Uint8Array | undefined) => (b ? Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true)) : undefined);
  const u64v = (n: number) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
    return b;
  };
  /** The chain's rules in order, as [matched address (hex), handle]. */
  async function dumpedRules(chain: string): Promise<Array<[string | undefined, number | undefined]>> {
    const { ops } = decode(await native().dump(h(), 16, NFPROTO_IPV4, TABLE, chain));
    return ops.map((o) => [hex(o.exprs[1]?.attrs.get(3)), leU64(o.attrs.get(R_HANDLE))]);
  }

  /** The commit's result, after checking that the kernel's ruleset and generation did not move. */
  async function unchangedBy(buf: Uint8Array) {
    const [before, gen] = [ns().nft("list", "ruleset"), await native().getGeneration(h())];
    const res = await native().commit(h(), buf);
    expect([ns().nft("list", "ruleset"), await native().getGeneration(h())]).toEqual([before, gen]);
    return res;
  }

  beforeAll(async () => {
    expect(await native().commit(h(), encode([tableOp(), chainOp("e"), chainOp("big"), chainOp("target")]))).toEqual({
      errors: [],
      handles: [],
    });
  });

  it("returns the handle of every echoed rule, the one a dump shows; nothing for the others", async () => {
    const res = await native().commit(
      h(),
      encode([chainOp("e"), echoed(addrRule("e", 1)), addrRule("e", 2), echoed(addrRule("e", 3)), echoed(addrRule("e", 4))]),
    );
    expect(res.errors).toEqual([]);
    const dumped = new Map(await dumpedRules("e"));
    expect(dumped.size).toBe(4);
    expect(res.handles).toEqual([
      { op: 1, handle: dumped.get(hex(ip4(1))) },
      { op: 3, handle: dumped.get(hex(ip4(3))) },
      { op: 4, handle: dumped.get(hex(ip4(4))) },
    ]);
    for (const { handle } of res.handles) expect(handle).toBeGreaterThan(0);
  });

  it("a replace by that handle changes exactly that rule, which keeps its handle", async () => {
    const before = await dumpedRules("e");
    const [, target] = must(before[1]);
    const replace: Op = {
      ...addrRule("e", 99),
      nlFlags: NLM_F_REPLACE | NLM_F_ECHO,
      attrs: [[R.TABLE, str(TABLE)], [R.CHAIN, str("e")], [R_HANDLE, u64v(must(target))]],
    };
    const res = await native().commit(h(), encode([replace]));
    expect(res).toEqual({ errors: [], handles: [{ op: 0, handle: target }] });
    const after = await dumpedRules("e");
    expect(after).toEqual(before.map(([addr, handle], i) => (i === 1 ? [hex(ip4(99)), handle] : [addr, handle])));
  });

  it("check mode echoes nothing and commits nothing", async () => {
    const res = await unchangedBy(encode([echoed(addrRule("e", 50)), echoed(addrRule("e", 51))], CHECK));
    expect(res).toEqual({ errors: [], handles: [] });
  });

  it("a refused batch returns no handles, attributes the error, and leaves no echo for the next commit", async () => {
    const bad = await unchangedBy(
      encode([echoed(addrRule("e", 60)), echoed(addrRule("e", 61, jump("no_such_chain"))), echoed(addrRule("e", 62))]),
    );
    expect(bad.handles).toEqual([]);
    expect(bad.errors).toEqual([expect.objectContaining({ op: 1, element: -1, errno: ENOENT, phase: "op" })]);
    const good = await native().commit(h(), encode([echoed(addrRule("e", 63))]));
    const dumped = new Map(await dumpedRules("e"));
    expect(good).toEqual({ errors: [], handles: [{ op: 0, handle: dumped.get(hex(ip4(63))) }] });
  });

  it("5000 echoed rules in one batch: 5000 handles, each the dump's, no ENOBUFS", async () => {
    // Each echo ~2.3 KiB, more than half of NLMSG_GOODSIZE: the kernel cannot pack two in one skb, so
    // this is the receive queue's worst case (5000 skbs of 8 KiB), not what small rules need.
    const logs: Expr[] = Array.from({ length: 14 }, (_, k) => ({ name: "log", attrs: [[1, str(`${k}`.padEnd(120, "p"))]] }));
    const n = 5000;
    const ops: Op[] = [];
    for (let i = 0; i < n; i++) ops.push(echoed(ruleOp("big", [saddr, cmpEq(ip4(1000 + i)), ...logs, accept])));
    const t0 = performance.now();
    const res = await native().commit(h(), encode(ops));
    const t1 = performance.now();
    expect(res.errors).toEqual([]);
    const dumped = await dumpedRules("big");
    expect(dumped.length).toBe(n);
    // Echoes come in batch order, and an appended rule lands at the chain's end: both are request order.
    expect(res.handles).toEqual(dumped.map(([addr, handle], i) => {
      expect(addr).toBe(hex(ip4(1000 + i)));
      return { op: i, handle };
    }));
    expect(new Set(res.handles.map((x) => x.handle)).size).toBe(n);
    console.log(`5000 echoed rules: commit ${(t1 - t0).toFixed(0)} ms`);
  }, 60_000);

  it("refuses NLM_F_ECHO on anything but NEWRULE", async () => {
    const re = /NLM_F_ECHO \(0x0008\) is only for NEWRULE/;
    await expect(native().commit(h(), encode([echoed(chainOp("x"))]))).rejects.toThrow(re);
    await expect(native().commit(h(), encode([echoed(tableOp())]))).rejects.toThrow(re);
    const delRule: Op = { ...addrRule("e", 1), msgType: 8, exprs: [], attrs: [[R.TABLE, str(TABLE)], [R.CHAIN, str("e")], [R_HANDLE, u64v(1)]] };
    await expect(native().commit(h(), encode([echoed(delRule)]))).rejects.toThrow(re);
    await expect(native().commit(h(), encode([echoed(elemsOp("s", [ip4(1)]))]))).rejects.toThrow(re);
  });
});
