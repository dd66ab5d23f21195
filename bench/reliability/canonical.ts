// A ruleset (`nft -j list ruleset`) in a canonical form, so that two rulesets that program the same
// service proxy compare equal however they got there: a clean cold start, or a restart after a
// kill -9 in the middle of partial syncs. What is dropped or rewritten, and why:
// - handles, counter values and element expiry: kernel bookkeeping and traffic, not programming;
// - the elements of dynamic sets (affinity pins, kube-proxy's affinity sets): written by packets;
// - the slots layout's slot numbers: which slots of which bucket map a service chain's endpoints
//   occupy depends on history (the allocator keeps assignments, and adopts them from the kernel
//   after a restart, src/proxy/layout/slots/allocator.ts). So each `numgen random mod N offset K
//   map @endpoints-B` becomes the sorted list of the N endpoints it reaches, the endpoints-B and
//   pins-B maps themselves are dropped, and the affinity service id a pin rule uses (also
//   allocated) becomes "ID". What is kept of the bucket maps: how many of their elements no rule
//   reaches (0 after a clean cold start; more would be a leak).
// - the slots layout's balance maps and chains (ports reached through their ClusterIP alone,
//   src/proxy/layout/slots/balance.ts): which map a port's endpoints went to depends on the
//   table's count of maps, which a table keeps from when it was written until the state outgrows
//   it, so on history too. So a dispatch element's `goto balance-B-P-N` becomes `goto balanced`,
//   with a line of its own for the N endpoints it reaches (sorted); the balance maps and chains
//   are dropped, after checking that each chain's rule picks N from its own bucket's map. Kept:
//   how many balance elements no dispatch element reaches.
// Everything else is kept; objects are compared as a sorted list of lines, rules in their chain's
// order.

export interface CanonicalRuleset {
  lines: string[];
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const BUCKET_MAP = /^(endpoints|pins)-\d+$/;
const BALANCE_MAP = /^balance-\d+$/;
const BALANCE_CHAIN = /^balance-(\d+)-([a-z]+)-(\d+)$/;
const TRAFFIC_KEYS = new Set(['handle', 'expires', 'packets', 'bytes']);

/** Keys sorted, kernel bookkeeping removed. */
function clean(v: Json): Json {
  if (Array.isArray(v)) return v.map(clean);
  if (v === null || typeof v !== 'object') return v;
  const out: Obj = {};
  for (const k of Object.keys(v).sort()) if (!TRAFFIC_KEYS.has(k)) out[k] = clean(v[k]!);
  return out;
}

const slotKey = (family: string, table: string, map: string): string => `${family} ${table} ${map}`;

export function canonicalRuleset(nftJson: string): CanonicalRuleset {
  const entries = (JSON.parse(nftJson) as { nftables: Obj[] }).nftables;
  /** Bucket maps: slot -> endpoint (as JSON), and which slots some rule reaches. */
  const slots = new Map<string, Map<number, string>>();
  const reached = new Map<string, Set<number>>();
  for (const e of entries) {
    const m = (e.map ?? e.set) as Obj | undefined;
    if (!m || !BUCKET_MAP.test(String(m.name))) continue;
    const bySlot = new Map<number, string>();
    for (const el of (m.elem ?? []) as Json[]) if (Array.isArray(el) && typeof el[0] === 'number') bySlot.set(el[0], JSON.stringify(clean(el[1]!)));
    slots.set(slotKey(String(m.family), String(m.table), String(m.name)), bySlot);
  }

  /** Balance maps: `address protocol port` -> number -> endpoint (as JSON); and which elements a dispatch element reaches. */
  const balanced = new Map<string, Map<string, Map<number, string>>>();
  const balanceReached = new Map<string, Set<string>>();
  for (const e of entries) {
    const m = e.map as Obj | undefined;
    if (!m || !BALANCE_MAP.test(String(m.name))) continue;
    const byPort = new Map<string, Map<number, string>>();
    for (const el of (m.elem ?? []) as Json[]) {
      const key = Array.isArray(el) ? ((el[0] as Obj | null)?.concat as Json[] | undefined) : undefined;
      if (!Array.isArray(el) || !Array.isArray(key) || key.length !== 4) continue;
      const port = `${String(key[0])} ${String(key[1])} ${String(key[2])}`;
      if (!byPort.has(port)) byPort.set(port, new Map());
      byPort.get(port)!.set(Number(key[3]), JSON.stringify(clean(el[1]!)));
    }
    balanced.set(slotKey(String(m.family), String(m.table), String(m.name)), byPort);
  }
  const balanceLines: string[] = [];
  /** A dispatch element's `goto balance-B-P-N`: `goto balanced`, and a line with the endpoints it reaches. */
  const resolveDispatch = (el: Json, family: string, table: string, set: string): Json => {
    if (!Array.isArray(el)) return el;
    const target = ((el[1] as Obj | null)?.goto as Obj | undefined)?.target;
    const chain = typeof target === 'string' ? BALANCE_CHAIN.exec(target) : null;
    if (!chain) return el;
    const key = (el[0] as Obj | null)?.concat as Json[] | undefined;
    const port = Array.isArray(key) ? key.map(String).join(' ') : String(el[0]);
    const map = slotKey(family, table, `balance-${chain[1]}`);
    const seen = balanceReached.get(map) ?? new Set<string>();
    balanceReached.set(map, seen);
    const endpoints: string[] = [];
    for (let k = 0; k < Number(chain[3]); k++) {
      seen.add(`${port} ${k}`);
      endpoints.push(balanced.get(map)?.get(port)?.get(k) ?? 'missing endpoint');
    }
    balanceLines.push(`balanced ${family} ${table} ${set} ${port} ${chain[2]} ${JSON.stringify(endpoints.sort())}`);
    return [el[0]!, { goto: { target: 'balanced' } }];
  };

  /** Replaces slot lookups by the endpoints they reach. */
  const resolve = (v: Json, family: string, table: string): Json => {
    if (Array.isArray(v)) return v.map((x) => resolve(x, family, table));
    if (v === null || typeof v !== 'object') return v;
    const map = v.map as Obj | undefined;
    const numgen = (map?.key as Obj | undefined)?.numgen as Obj | undefined;
    const data = typeof map?.data === 'string' ? map.data : '';
    if (numgen && /^@endpoints-\d+$/.test(data)) {
      const key = slotKey(family, table, data.slice(1));
      const bySlot = slots.get(key) ?? new Map<number, string>();
      const seen = reached.get(key) ?? new Set<number>();
      reached.set(key, seen);
      const offset = Number(numgen.offset ?? 0);
      const endpoints: string[] = [];
      for (let s = offset; s < offset + Number(numgen.mod); s++) {
        seen.add(s);
        endpoints.push(bySlot.get(s) ?? 'missing slot');
      }
      return { endpoints: endpoints.sort(), mode: String(numgen.mode) };
    }
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) out[k] = resolve(x, family, table);
    return out;
  };

  const lines: string[] = [];
  const ruleIndex = new Map<string, number>();
  for (const e of entries) {
    const [kind] = Object.keys(e);
    if (!kind || kind === 'metainfo') continue;
    const o = e[kind] as Obj;
    const family = String(o.family);
    const table = String(o.table ?? o.name);
    if ((kind === 'map' || kind === 'set') && (BUCKET_MAP.test(String(o.name)) || BALANCE_MAP.test(String(o.name)))) continue;
    if (kind === 'chain' && BALANCE_CHAIN.test(String(o.name))) continue;
    if (kind === 'rule' && BALANCE_CHAIN.test(String(o.chain))) {
      // Dropped, once it is seen to pick N endpoints from its own bucket's map by the destination.
      const [, bucket, , count] = BALANCE_CHAIN.exec(String(o.chain))!;
      const text = JSON.stringify(o.expr ?? []);
      if (!text.includes(`"data":"@balance-${bucket}"`) || !text.includes(`"mod":${count},`) || !text.includes('"field":"daddr"')) {
        lines.push(`balance chain ${family} ${table} ${String(o.chain)} does not pick ${count} from balance-${bucket}: ${text}`);
      }
      continue;
    }
    if (kind === 'rule') {
      const chain = `${family} ${table} ${String(o.chain)}`;
      const i = ruleIndex.get(chain) ?? 0;
      ruleIndex.set(chain, i + 1);
      let text = JSON.stringify(clean(resolve(o.expr ?? [], family, table)));
      if (text.includes('@pins-')) text = text.replace(/@pins-\d+/g, '@pins').replace(/0x[0-9a-f]+( \[invalid type\])?/g, 'ID');
      lines.push(`rule ${chain} #${String(i).padStart(6, '0')} ${text}`);
      continue;
    }
    const c = clean(o) as Obj;
    if ((kind === 'map' || kind === 'set') && Array.isArray(c.elem)) {
      const flags = Array.isArray(c.flags) ? c.flags : [];
      if (flags.includes('dynamic')) delete c.elem;
      else c.elem = c.elem.map((x) => JSON.stringify(resolveDispatch(x, family, table, String(o.name)))).sort();
    }
    lines.push(`${kind} ${JSON.stringify(c)}`);
  }
  for (const [key, bySlot] of slots) {
    const [family, table, map] = key.split(' ');
    if (!map!.startsWith('endpoints-')) continue;
    const seen = reached.get(key) ?? new Set<number>();
    const unreached = [...bySlot.keys()].filter((s) => !seen.has(s)).length;
    if (unreached) lines.push(`unreached endpoint slots ${family} ${table} ${map}: ${unreached}`);
  }
  for (const [key, byPort] of balanced) {
    const [family, table, map] = key.split(' ');
    const seen = balanceReached.get(key) ?? new Set<string>();
    let unreached = 0;
    for (const [port, byNumber] of byPort) for (const k of byNumber.keys()) if (!seen.has(`${port} ${k}`)) unreached++;
    if (unreached) lines.push(`unreached balance elements ${family} ${table} ${map}: ${unreached}`);
  }
  return { lines: [...lines, ...balanceLines].sort() };
}

export interface RulesetDiff {
  equal: boolean;
  onlyA: string[];
  onlyB: string[];
}

/** The lines only one side has (at most `limit` of each, for the report). */
export function diffRulesets(a: CanonicalRuleset, b: CanonicalRuleset, limit = 20): RulesetDiff {
  const count = (lines: string[]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
    return m;
  };
  const ca = count(a.lines);
  const cb = count(b.lines);
  const only = (x: Map<string, number>, y: Map<string, number>): string[] => [...x].filter(([l, n]) => (y.get(l) ?? 0) < n).map(([l]) => l);
  const onlyA = only(ca, cb);
  const onlyB = only(cb, ca);
  return { equal: onlyA.length === 0 && onlyB.length === 0, onlyA: onlyA.slice(0, limit), onlyB: onlyB.slice(0, limit) };
}
