// The addon's commit and dump against the kernel (native/README.md): a ruleset committed in one
// batch reads back from a dump as it was sent, 200,000 elements included. Every test runs in a fresh
// network namespace; the root namespace's ruleset is never written.
import { describe, expect, it } from "vitest";

import { C, cstr, decode, E, elemsOp, encode, hex, ip4, ip4text, ip6, leU32, must, NF_ACCEPT, NFPROTO_IPV4, NFT_JUMP, type Op, R, S, setOp, str, T, TABLE } from "./compact-format.js";
import { baseRuleset, KEYS_1000, native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

describe("native addon: commit and dump", () => {
  const { ns, h } = withNamespace();

  it("commits table + chain + set + 1000 elements + rules, and nft lists them", async () => {
    const before = await native().getGeneration(h());
    const res = await native().commit(h(), encode(baseRuleset()));
    expect(res).toEqual({ errors: [], handles: [] });
    const after = await native().getGeneration(h());
    expect(after).toBeGreaterThan(before);
    const text = ns().nft("list", "ruleset");
    expect(text).toContain(`table ip ${TABLE}`);
    expect(text).toMatch(/chain input \{\s*type filter hook input priority filter; policy accept;/);
    expect(text).toContain("chain target");
    expect(text).toContain("ip saddr 198.18.0.1 jump target");
    expect(text).toContain("ip saddr @s accept");
    expect(text).toContain("set s {");
    for (const i of [1, 2, 500, 999, 1000]) expect(text).toContain(ip4text(i));
  });

  it("dump returns what was sent, one generation", async () => {
    const gen = await native().getGeneration(h());
    const { genid, ops } = decode(await native().dump(h(), 31, 0, null));
    expect(genid).toBe(gen);
    const tables = ops.filter((o) => o.kind === 0);
    expect(tables.map((t) => cstr(t.attrs.get(T.NAME)))).toEqual([TABLE]);
    expect(tables[0]?.family).toBe(NFPROTO_IPV4);

    const chains = ops.filter((o) => o.kind === 1);
    const input = chains.find((c) => cstr(c.attrs.get(C.NAME)) === "input");
    expect(input).toBeDefined();
    expect(cstr(input?.attrs.get(C.TYPE))).toBe("filter");
    expect(leU32(input?.attrs.get(C.HOOKNUM))).toBe(1);
    expect(leU32(input?.attrs.get(C.PRIO))).toBe(0);
    expect(leU32(input?.attrs.get(C.POLICY))).toBe(NF_ACCEPT);
    expect(chains.map((c) => cstr(c.attrs.get(C.NAME))).sort()).toEqual(["input", "target"]);

    const set = ops.find((o) => o.kind === 3);
    expect(cstr(set?.attrs.get(S.NAME))).toBe("s");
    expect(leU32(set?.attrs.get(S.KEY_TYPE))).toBe(7);
    expect(leU32(set?.attrs.get(S.KEY_LEN))).toBe(4);

    const elems = ops.find((o) => o.kind === 4);
    expect(cstr(elems?.attrs.get(S.NAME))).toBe("s");
    expect(cstr(elems?.attrs.get(S.TABLE))).toBe(TABLE);
    expect(elems?.elems.length).toBe(1000);
    const got = new Set(elems?.elems.map((e) => hex(e.attrs.get(E.KEY))));
    expect(got).toEqual(new Set(KEYS_1000.map((k) => hex(k))));

    const rules = ops.filter((o) => o.kind === 2);
    expect(rules.length).toBe(2);
    const r0 = must(rules[0]);
    const r1 = must(rules[1]);
    expect(cstr(r0.attrs.get(R.CHAIN))).toBe("input");
    expect(r0.exprs.map((e) => e.name)).toEqual(["payload", "cmp", "immediate"]);
    const [pl, cmp, imm] = [must(r0.exprs[0]), must(r0.exprs[1]), must(r0.exprs[2])];
    expect([1, 2, 3, 4].map((id) => leU32(pl.attrs.get(id)))).toEqual([1, 1, 12, 4]);
    expect(leU32(cmp.attrs.get(1))).toBe(1);
    expect(leU32(cmp.attrs.get(2))).toBe(0);
    expect(hex(cmp.attrs.get(3))).toBe(hex(ip4(1)));
    expect(leU32(imm.attrs.get(1))).toBe(0);
    expect(leU32(imm.attrs.get(3))).toBe(NFT_JUMP >>> 0);
    expect(cstr(imm.attrs.get(4))).toBe("target");
    expect(r1.exprs.map((e) => e.name)).toEqual(["payload", "lookup", "immediate"]);
    expect(cstr(r1.exprs[1]?.attrs.get(3))).toBe("s");

    // filters
    const onlyTables = decode(await native().dump(h(), 1, NFPROTO_IPV4, TABLE)).ops;
    expect(onlyTables.map((o) => o.kind)).toEqual([0]);
    expect(decode(await native().dump(h(), 31, 0, "no_such_table")).ops).toEqual([]);
    expect(decode(await native().dump(h(), 31, 10 /* ip6 */, null)).ops).toEqual([]);
    const one = decode(await native().dumpSetElements(h(), NFPROTO_IPV4, TABLE, "s"));
    expect(one.ops.length).toBe(1);
    expect(one.ops[0]?.elems.length).toBe(1000);
    // 128 (leave out digested anonymous sets' elements) alone names nothing to dump.
    await expect(native().dump(h(), 128, 0, null)).rejects.toThrow(/`what` must be a bitmask .*\(at least one of them\)/);
    await expect(native().dump(h(), 256, 0, null)).rejects.toThrow(TypeError);
    // A named set carries no digest: its elements are dumped with the flag as without it.
    expect(decode(await native().dump(h(), 4 | 8 | 128, NFPROTO_IPV4, TABLE)).ops.flatMap((o) => o.elems).length).toBe(1000);
  });

  it("commits 200,000 elements in one batch", async () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => ip6(i));
    const buf = encode([setOp("big", 8 /* ipv6_addr */, 16, 2), elemsOp("big", keys)]);
    const t0 = performance.now();
    const res = await native().commit(h(), buf);
    const t1 = performance.now();
    expect(res).toEqual({ errors: [], handles: [] });
    const dumped = decode(await native().dumpSetElements(h(), NFPROTO_IPV4, TABLE, "big"));
    const t2 = performance.now();
    const bigOp = must(dumped.ops[0]);
    expect(bigOp.elems.length).toBe(200_000);
    const got = new Set(bigOp.elems.map((e) => hex(e.attrs.get(E.KEY))));
    expect(got.size).toBe(200_000);
    expect(got.has(hex(ip6(199_999)))).toBe(true);
    console.log(
      `200k elements: request ${(buf.length / 1048576).toFixed(1)} MiB, commit ${(t1 - t0).toFixed(0)} ms, ` +
        `dumpSetElements ${(t2 - t1).toFixed(0)} ms`,
    );
    // DELSET (and keep `nft list ruleset` fast for the tests below)
    const del: Op = { msgType: 11, kind: 3, family: NFPROTO_IPV4, attrs: [[S.TABLE, str(TABLE)], [S.NAME, str("big")]] };
    expect(await native().commit(h(), encode([del]))).toEqual({ errors: [], handles: [] });
    expect(ns().nft("list", "ruleset")).not.toContain("set big");
  }, 120_000);
});
