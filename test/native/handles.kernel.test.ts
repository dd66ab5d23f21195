// The addon's handles: a namespace opened by name, path or fd (never the root namespace's ruleset
// written), close, and overlapping calls on one handle. In a fresh network namespace.
import { closeSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { C, chainOp, cstr, decode, encode, NFPROTO_IPV4, T, TABLE } from "./compact-format.js";
import { baseRuleset, native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

describe("native addon: handles and namespaces", () => {
  const { ns, h } = withNamespace(baseRuleset());

  it("opens a namespace by name, by path and by fd, and never the root namespace's ruleset", async () => {
    const byPath = native().open(`/run/netns/${ns().name}`);
    const fd = openSync(`/run/netns/${ns().name}`, "r");
    try {
      const byFd = native().open(fd);
      const g = await native().getGeneration(h());
      expect(await native().getGeneration(byPath)).toBe(g);
      expect(await native().getGeneration(byFd)).toBe(g);
      expect(await native().commit(byFd, encode([chainOp("via_fd")]))).toEqual({ errors: [], handles: [] });
      const chains = decode(await native().dump(byPath, 2, NFPROTO_IPV4, TABLE)).ops;
      expect(chains.map((c) => cstr(c.attrs.get(C.NAME)))).toContain("via_fd");
      native().close(byFd);
    } finally {
      closeSync(fd);
      native().close(byPath);
    }
    // Read-only look at the caller's namespace: our table must not be there.
    const root = native().open();
    try {
      const tables = decode(await native().dump(root, 1, 0, null)).ops;
      expect(tables.map((t) => cstr(t.attrs.get(T.NAME)))).not.toContain(TABLE);
    } finally {
      native().close(root);
    }
    expect(() => native().open("nftlink-t-does-not-exist")).toThrow(/cannot open network namespace/);
    expect(() => native().open(-1)).toThrow(TypeError);
  });

  it("close is idempotent and a closed handle rejects", async () => {
    const x = native().open(ns().name);
    native().close(x);
    native().close(x);
    await expect(native().getGeneration(x)).rejects.toThrow(/closed/);
    await expect(native().commit(x, encode([chainOp("never")]))).rejects.toThrow(/closed/);
    await expect(native().dump(x, 31, 0, null)).rejects.toThrow(/closed/);
    // close while a request is in flight: the request finishes (or fails cleanly), nothing crashes
    const y = native().open(ns().name);
    const p = native().dump(y, 31, 0, null);
    native().close(y);
    await p.then(
      (buf) => expect(buf).toBeInstanceOf(Uint8Array),
      (err: unknown) => expect(err).toBeInstanceOf(Error),
    );
  });

  it("overlapping calls on one handle are serialised", async () => {
    const results = await Promise.all([
      native().dump(h(), 31, 0, null),
      native().getGeneration(h()),
      native().commit(h(), encode([chainOp("overlap")])),
      native().dump(h(), 3, 0, null),
    ]);
    expect(results[2]).toEqual({ errors: [], handles: [] });
    decode(results[0] as Uint8Array);
    decode(results[3] as Uint8Array);
  });
});
