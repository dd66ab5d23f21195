// How the addon reports what the kernel refuses: each error attributed to its operation and element
// (across 64 KiB messages and 10,000-operation batches), a jump loop, CHECK mode and the generation
// compare-and-swap; a refused batch leaves the ruleset unchanged. In a fresh network namespace.
import { describe, expect, it } from "vitest";

import { accept, chainOp, CHECK, cmpEq, EEXIST, EINVAL, elemsOp, encode, ENOENT, ERESTART, GENID, ip4, jump, NLM_F_CREATE, NLM_F_EXCL, type Op, ruleOp, saddr, tableOp } from "./compact-format.js";
import { baseRuleset, native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

describe("native addon: errors", () => {
  const { ns, h } = withNamespace(baseRuleset());

  it("attributes a jump to a missing chain (ENOENT) to its op and leaves the kernel unchanged", async () => {
    const before = ns().nft("list", "ruleset");
    const gen = await native().getGeneration(h());
    const res = await native().commit(
      h(),
      encode([chainOp("c1"), ruleOp("input", [saddr, cmpEq(ip4(2)), jump("nope")]), chainOp("c2")]),
    );
    expect(res.errors.length).toBe(1);
    expect(res.errors[0]).toMatchObject({ op: 1, element: -1, errno: ENOENT, phase: "op" });
    expect(ns().nft("list", "ruleset")).toBe(before);
    expect(await native().getGeneration(h())).toBe(gen);
  });

  it("attributes a duplicate NLM_F_EXCL create (EEXIST)", async () => {
    const before = ns().nft("list", "ruleset");
    const res = await native().commit(
      h(),
      encode([chainOp("c1"), chainOp("input", true, NLM_F_CREATE | NLM_F_EXCL), chainOp("c2")]),
    );
    expect(res.errors).toEqual([expect.objectContaining({ op: 1, element: -1, errno: EEXIST, phase: "op" })]);
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("attributes an element with the wrong key length (EINVAL) to its op and element, across chunks", async () => {
    const before = ns().nft("list", "ruleset");
    for (const [count, bad] of [
      [50, 37],
      [20000, 13337], // ~4000 elements per 64 KiB message: the third message
      [20000, 0],
      [20000, 19999],
    ] as const) {
      const keys = Array.from({ length: count }, (_, i) => (i === bad ? Uint8Array.of(1, 2) : ip4(5000 + i)));
      const res = await native().commit(h(), encode([tableOp(), elemsOp("s", keys)]));
      expect(res.errors.length).toBe(1);
      expect(res.errors[0]).toMatchObject({ op: 1, element: bad, errno: EINVAL, phase: "op" });
    }
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("attributes one bad op in a 10,000-op batch (random positions)", async () => {
    const before = ns().nft("list", "ruleset");
    for (let trial = 0; trial < 3; trial++) {
      const bad = Math.floor(Math.random() * 10000);
      const ops: Op[] = [];
      for (let i = 0; i < 10000; i++) {
        if (i === bad) ops.push(ruleOp("target", [saddr, cmpEq(ip4(i)), jump("missing_chain")]));
        else if (i % 2 === 0) ops.push(ruleOp("target", [saddr, cmpEq(ip4(i)), accept]));
        else ops.push(elemsOp("s", [ip4(20000 + i)]));
      }
      const res = await native().commit(h(), encode(ops));
      expect(res.errors.length, `trial ${trial}, bad op ${bad}`).toBe(1);
      expect(res.errors[0]).toMatchObject({ op: bad, element: -1, errno: ENOENT, phase: "op" });
    }
    expect(ns().nft("list", "ruleset")).toBe(before);
  }, 60_000);

  it("reports a jump loop", async () => {
    const before = ns().nft("list", "ruleset");
    const res = await native().commit(
      h(),
      encode([
        chainOp("loop_a"),
        chainOp("loop_b"),
        ruleOp("loop_a", [jump("loop_b")]),
        ruleOp("loop_b", [jump("loop_a")]),
        ruleOp("input", [jump("loop_a")]), // loops only count when reachable from a base chain
      ]),
    );
    // Kernel fact (6.x): commit-time validation fails with EAGAIN, nfnetlink replays the batch
    // validating each rule as it is added, so the loop lands on the rule that closed it: EMLINK when
    // the walk exceeds the jump stack (ELOOP on kernels that detect the loop itself).
    expect(res.errors).toEqual([expect.objectContaining({ op: 4, element: -1, phase: "op" })]);
    expect([31 /* EMLINK */, 40 /* ELOOP */]).toContain(res.errors[0]?.errno);
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("CHECK mode validates, reports errors, and commits nothing", async () => {
    const before = ns().nft("list", "ruleset");
    const gen = await native().getGeneration(h());
    expect(await native().commit(h(), encode([chainOp("checked")], CHECK))).toEqual({ errors: [], handles: [] });
    const bad = await native().commit(
      h(),
      encode([chainOp("checked"), chainOp("input", true, NLM_F_CREATE | NLM_F_EXCL)], CHECK),
    );
    expect(bad.errors).toEqual([expect.objectContaining({ op: 1, errno: EEXIST, phase: "op" })]);
    expect(ns().nft("list", "ruleset")).toBe(before);
    expect(await native().getGeneration(h())).toBe(gen);
  });

  it("genid compare-and-swap: a stale generation is refused on the batch (ERESTART)", async () => {
    const gen = await native().getGeneration(h());
    const stale = await native().commit(h(), encode([chainOp("cas")], GENID, gen - 1));
    expect(stale.errors).toEqual([{ op: -1, element: -1, errno: ERESTART, message: expect.any(String), phase: "batch", attrPath: [] }]);
    expect(ns().nft("list", "ruleset")).not.toContain("chain cas");
    const ok = await native().commit(h(), encode([chainOp("cas")], GENID, gen));
    expect(ok).toEqual({ errors: [], handles: [] });
    expect(await native().getGeneration(h())).toBeGreaterThan(gen);
    expect(ns().nft("list", "ruleset")).toContain("chain cas");
  });
});
