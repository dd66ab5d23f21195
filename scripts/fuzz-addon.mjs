#!/usr/bin/env node
// Fuzz driver for the native addon: random and mutated compact-format buffers into commit(), and a
// quarter of them cut into parts for a streamed commit (commitStream: fed, then ended, cancelled or
// dropped), inside a fresh network namespace (never the caller's). Every call must resolve or reject
// with an Error; any crash is the sanitizer's to report (scripts/fuzz-asan.sh).
//
//   node scripts/fuzz-addon.mjs [iterations=20000] [path/to/nftlink.node]
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const iterations = Number(process.argv[2] ?? 20000);
const addonPath = resolve(process.argv[3] ?? join(root, "build", "Release", "nftlink.node"));
if (!Number.isInteger(iterations) || iterations < 0) throw new Error(`bad iteration count ${process.argv[2]}`);
const nat = createRequire(import.meta.url)(addonPath);

// ---- a small encoder (kept local on purpose: this exercises the addon, not src/nft) ---------------
const le16 = (n) => { const b = Buffer.alloc(2); b.writeUInt16LE(n & 0xffff); return b; };
const le32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; };
const le64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
const str = (s) => Buffer.from(s + "\0");
const attrs = (list) => Buffer.concat([le16(list.length), ...list.map(([id, v]) => Buffer.concat([le16(id), le32(v.length), v]))]);
const exprs = (list) =>
  Buffer.concat([
    le16(list.length),
    ...list.map((e) => Buffer.concat([Buffer.from([e.name.length]), Buffer.from(e.name), attrs(e.attrs), exprs(e.exprs ?? [])])),
  ]);
function op({ type, kind, flags = 0x400, family = 2, a = [], x = [], elems }) {
  const head = Buffer.from([type, kind, flags & 0xff, flags >> 8, family, 0, 0, 0]);
  const parts = [head, attrs(a), exprs(x)];
  if (kind === 4) {
    parts.push(le32(elems.length));
    for (const e of elems) parts.push(attrs(e.a), exprs(e.x ?? []));
  }
  return Buffer.concat(parts);
}
function request(ops, flags = 0, genid = 0) {
  const h = Buffer.alloc(16);
  h.writeUInt32LE(0x4c54464e, 0);
  h.writeUInt16LE(1, 4);
  h.writeUInt16LE(flags, 6);
  h.writeUInt32LE(genid, 8);
  h.writeUInt32LE(ops.length, 12);
  return Buffer.concat([h, ...ops]);
}

const ip4 = (i) => Buffer.from([198, 18 + ((i >> 16) & 1), (i >> 8) & 255, i & 255]);
const T = "fz";
const corpus = [
  request([
    op({ type: 0, kind: 0, flags: 0, a: [[0, str(T)]] }),
    op({ type: 3, kind: 1, a: [[2, str(T)], [0, str("in")], [10, str("filter")], [3, le32(1)], [4, le32(0)], [5, le32(1)]] }),
    op({ type: 3, kind: 1, a: [[2, str(T)], [0, str("c")]] }),
    op({ type: 9, kind: 3, a: [[0, str(T)], [1, str("s")], [2, le32(0x30) /* timeout, eval: dynset updates it */], [3, le32(7)], [4, le32(4)], [8, le32(1)], [11, le64(60000)]] }),
    op({ type: 12, kind: 4, a: [[0, str(T)], [1, str("s")]], elems: Array.from({ length: 8 }, (_, i) => ({ a: [[1, ip4(i)], [5, le64(30000)]] })) }),
    op({
      type: 6, kind: 2, flags: 0xc00, a: [[1, str(T)], [2, str("in")]],
      x: [
        { name: "payload", attrs: [[1, le32(1)], [2, le32(1)], [3, le32(12)], [4, le32(4)]] },
        { name: "cmp", attrs: [[1, le32(1)], [2, le32(0)], [3, ip4(1)]] },
        { name: "counter", attrs: [[1, le64(0)], [2, le64(0)]] },
        { name: "log", attrs: [[1, str("fz ")], [2, le16(1)]] },
        { name: "immediate", attrs: [[1, le32(0)], [3, le32(-3)], [4, str("c")]] },
      ],
    }),
    op({
      type: 6, kind: 2, flags: 0xc00, a: [[1, str(T)], [2, str("c")]],
      x: [
        { name: "payload", attrs: [[1, le32(1)], [2, le32(1)], [3, le32(16)], [4, le32(4)]] },
        { name: "dynset", attrs: [[1, le32(1)], [3, le32(1)], [5, str("s")], [4, le64(1000)]], exprs: [{ name: "counter", attrs: [] }] },
        { name: "ct", attrs: [[1, le32(1)], [2, le32(7) /* l3protocol: needs a direction */], [3, Buffer.from([0])]] },
        { name: "bitwise", attrs: [[1, le32(1)], [2, le32(1)], [3, le32(4)], [4, Buffer.alloc(4, 0xff)], [5, Buffer.alloc(4)]] },
        { name: "limit", attrs: [[1, le64(10)], [2, le64(1)], [3, le32(5)]] },
        { name: "reject", attrs: [[1, le32(0)], [2, Buffer.from([3])]] },
      ],
    }),
  ]),
  // iptables-nft's xt expressions: a comment match (struct xt_comment_info, 256 bytes) and a LOG
  // target (struct xt_log_info, 32 bytes); the info is the one attribute libnftnl keeps as a pointer
  request([op({ type: 6, kind: 2, flags: 0xc00, a: [[1, str(T)], [2, str("c")]], x: [
    { name: "match", attrs: [[1, str("comment")], [2, le32(0)], [3, Buffer.alloc(256, 0x61).fill(0, 255)]] },
    { name: "target", attrs: [[1, str("LOG")], [2, le32(0)], [3, Buffer.alloc(32)]] },
  ] })]),
  // nft_queue may be absent from the kernel (ENOENT): still worth mutating for the u16 attributes
  request([op({ type: 6, kind: 2, flags: 0xc00, a: [[1, str(T)], [2, str("c")]], x: [{ name: "queue", attrs: [[1, le16(3)], [2, le16(1)], [3, le16(0)]] }] })]),
  request([op({ type: 14, kind: 4, a: [[0, str(T)], [1, str("s")]], elems: [{ a: [[1, ip4(3)]] }, { a: [[1, Buffer.from([1, 2])]] }] })], 1),
  request([op({ type: 11, kind: 3, flags: 0, a: [[0, str(T)], [1, str("s")]] }), op({ type: 2, kind: 0, flags: 0, a: [[0, str(T)]] })], 2, 7),
];

function mutate(base) {
  const m = Buffer.from(base);
  const r = Math.random();
  if (r < 0.45) {
    for (let k = 1 + Math.floor(Math.random() * 6); k > 0; k--) {
      const at = Math.floor(Math.random() * m.length);
      m[at] = Math.random() < 0.5 ? Math.floor(Math.random() * 256) : m[at] ^ (1 << Math.floor(Math.random() * 8));
    }
    return m;
  }
  if (r < 0.6) return m.subarray(0, Math.floor(Math.random() * m.length));
  if (r < 0.75) {
    // rewrite a random aligned 16/32-bit field to an interesting value (counts and lengths)
    const at = Math.floor(Math.random() * (m.length - 4));
    const v = [0, 1, 2, 3, 4, 8, 63, 64, 65, 255, 256, 257, 0x7fff, 0xffff, 0x10000, 0x7fffffff, 0xffffffff][Math.floor(Math.random() * 17)];
    if (Math.random() < 0.5) m.writeUInt16LE(v & 0xffff, at);
    else m.writeUInt32LE(v >>> 0, at);
    return m;
  }
  if (r < 0.9) {
    // insert or delete a run of bytes
    const at = Math.floor(Math.random() * m.length);
    const n = 1 + Math.floor(Math.random() * 16);
    return Math.random() < 0.5 ? Buffer.concat([m.subarray(0, at), randomBytes(n), m.subarray(at)]) : Buffer.concat([m.subarray(0, at), m.subarray(at + n)]);
  }
  // splice two corpus entries
  const other = corpus[Math.floor(Math.random() * corpus.length)];
  const cut = Math.floor(Math.random() * m.length);
  return Buffer.concat([m.subarray(0, cut), other.subarray(Math.floor(Math.random() * other.length))]);
}

/**
 * The same bytes as a streamed commit: the body after the 16-byte header cut at up to two random
 * places, the header's operation count shared out among the parts (a mutated count stays wrong),
 * then ended with the header's flags, or cancelled, or dropped unended (its finalizer frees it).
 */
async function streamed(h, buf) {
  const s = nat.commitStream(h);
  const body = buf.subarray(Math.min(16, buf.length));
  const count = buf.length >= 16 ? buf.readUInt32LE(12) : 0;
  const cuts = [0, ...Array.from({ length: Math.floor(Math.random() * 3) }, () => Math.floor(Math.random() * (body.length + 1)))].sort((a, b) => a - b);
  let left = count;
  cuts.forEach((at, k) => {
    const end = cuts[k + 1] ?? body.length;
    const n = k === cuts.length - 1 ? left : Math.floor(Math.random() * (left + 1));
    left -= n;
    nat.commitStreamFeed(s, new Uint8Array(body.buffer, body.byteOffset + at, end - at), n);
  });
  const r = Math.random();
  if (r < 0.1) {
    nat.commitStreamCancel(s);
    await nat.commitStreamEnd(s, 0, 0).then(
      () => {
        throw new Error("a cancelled stream's end resolved");
      },
      () => {},
    );
    return { errors: [] };
  }
  if (r < 0.15) return { errors: [] };
  return nat.commitStreamEnd(s, buf.length >= 8 ? buf.readUInt16LE(6) & 3 : 0, buf.length >= 12 ? buf.readUInt32LE(8) : 0);
}

const ns = `nftlink-fz-${randomBytes(5).toString("hex")}`;
execFileSync("ip", ["netns", "add", ns]);
let resolved = 0;
let rejected = 0;
try {
  const h = nat.open(ns);
  const seeded = await nat.commit(h, corpus[0]);
  if (seeded.errors.length) throw new Error(`seed ruleset refused: ${JSON.stringify(seeded.errors)}`);
  for (const c of corpus.slice(1)) await nat.commit(h, c);
  // The chunking, roll-back and error-mapping paths: 30,000 elements (several 64 KiB messages), once
  // with a bad key deep in the third message, once clean, then dumped.
  const many = (bad) =>
    request([op({ type: 12, kind: 4, a: [[0, str(T)], [1, str("s")]], elems: Array.from({ length: 30000 }, (_, i) => ({ a: [[1, i === bad ? Buffer.from([1]) : ip4(1000 + i)]] })) })]);
  const refused = await nat.commit(h, many(17777));
  if (refused.errors.length !== 1 || refused.errors[0].element !== 17777 || refused.errors[0].errno !== 22)
    throw new Error(`element error misattributed: ${JSON.stringify(refused.errors)}`);
  const ok = await nat.commit(h, many(-1));
  if (ok.errors.length !== 0) throw new Error(`30,000 elements refused: ${JSON.stringify(ok.errors.slice(0, 3))}`);
  await nat.dump(h, 31, 0, null);
  for (let i = 0; i < iterations; i++) {
    const pick = Math.random();
    const buf =
      pick < 0.1
        ? randomBytes(Math.floor(Math.random() * 256))
        : mutate(corpus[Math.floor(Math.random() * corpus.length)]);
    try {
      const r = i % 4 === 3 ? await streamed(h, buf) : await nat.commit(h, new Uint8Array(buf.buffer, buf.byteOffset, buf.length));
      if (!Array.isArray(r.errors)) throw new Error("commit resolved without an errors array");
      resolved++;
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith("nftlink: ")) throw new Error(`unexpected rejection: ${e}`);
      rejected++;
    }
    if (i % 500 === 0) {
      // exercise the dump path over whatever the mutations managed to create
      await nat.dump(h, 31, 0, null);
      await nat.dumpSetElements(h, 2, T, "s").catch((e) => {
        if (!(e instanceof Error)) throw e;
      });
    }
    if (i % 5000 === 0) process.stdout.write(`fuzz: ${i}/${iterations}\n`);
  }
  await nat.getGeneration(h);
  nat.close(h);
} finally {
  execFileSync("ip", ["netns", "del", ns]);
}
console.log(`fuzz: ${iterations} iterations, ${resolved} resolved, ${rejected} rejected, no crash`);
