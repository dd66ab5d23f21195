// The `nft -f` script that takes a table from one `nftlink render` text to another: what a
// text-driven proxy (kube-proxy's nftables mode) hands nft per sync for that change. bench:process's
// churn ratio times it as its own process against the proxy's own sync of the same change.
//
// render writes only `add` statements into empty tables: declarations (table, set, map, chain), the
// rules of each chain in order, and elements. The delta is, in an order the kernel accepts in one
// transaction: new declarations and chains (with their rules); chains whose rules changed, flushed
// and written again; elements gone (deleted by key), elements new or with a new value; then chains,
// sets and maps that are gone (flushed first: kube-proxy deletes stale chains so).

interface Parsed {
  /** "add table|set|map|chain ..." lines by object ("chain ip kube-proxy NAME"), in order. */
  declarations: Map<string, string>;
  /** The rules of each chain ("ip kube-proxy NAME"), in order. */
  rules: Map<string, string[]>;
  /** The elements of each set or map ("ip kube-proxy NAME"), by key, with their text. */
  elements: Map<string, Map<string, string>>;
  /** The sets and maps that are maps (their elements' keys end at " : "). */
  maps: Set<string>;
}

/** Splits "a, b, c" at the commas outside quotes and braces. */
export function splitElements(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) {
      out.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = body.slice(start).trim();
  if (last) out.push(last);
  return out;
}

function parse(text: string): Parsed {
  const p: Parsed = { declarations: new Map(), rules: new Map(), elements: new Map(), maps: new Set() };
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const words = line.split(' ');
    const [verb, kind, family, table, name] = words;
    if (verb !== 'add' || !kind || !family || !table) throw new Error(`nft-delta: not a render statement: ${line}`);
    const object = `${family} ${table} ${name ?? ''}`;
    if (kind === 'table') p.declarations.set(`table ${family} ${table}`, line);
    else if (kind === 'set' || kind === 'map' || kind === 'chain') {
      p.declarations.set(`${kind} ${object}`, line);
      if (kind === 'map') p.maps.add(object);
      if (kind === 'chain' && !p.rules.has(object)) p.rules.set(object, []);
    } else if (kind === 'rule') {
      const rules = p.rules.get(object);
      if (!rules) throw new Error(`nft-delta: a rule before its chain: ${line}`);
      rules.push(line);
    } else if (kind === 'element') {
      const open = line.indexOf('{');
      const body = line.slice(open + 1, line.lastIndexOf('}'));
      let m = p.elements.get(object);
      if (!m) p.elements.set(object, (m = new Map()));
      for (const e of splitElements(body)) m.set(p.maps.has(object) ? e.slice(0, e.indexOf(' : ')) : e, e);
    } else throw new Error(`nft-delta: unknown statement: ${line}`);
  }
  return p;
}

const sameRules = (a: readonly string[] | undefined, b: readonly string[]): boolean => a !== undefined && a.length === b.length && a.every((r, i) => r === b[i]);

/** The nft -f script from `before` to `after` (both `nftlink render` texts); empty when they agree. */
export function nftDelta(beforeText: string, afterText: string): string {
  const before = parse(beforeText);
  const after = parse(afterText);
  const out: string[] = [];
  for (const [key, line] of after.declarations) if (!before.declarations.has(key)) out.push(line);
  for (const [chain, rules] of after.rules) {
    const old = before.rules.get(chain);
    if (sameRules(old, rules)) continue;
    if (old?.length) out.push(`flush chain ${chain}`);
    out.push(...rules);
  }
  const deletions = (object: string, keys: string[]): void => {
    if (keys.length) out.push(`delete element ${object} { ${keys.join(', ')} }`);
  };
  for (const [object, old] of before.elements) {
    const now = after.elements.get(object);
    deletions(object, [...old.entries()].filter(([k, e]) => now?.get(k) !== e).map(([k]) => k));
  }
  for (const [object, now] of after.elements) {
    const old = before.elements.get(object);
    const added = [...now.entries()].filter(([k, e]) => old?.get(k) !== e).map(([, e]) => e);
    if (added.length) out.push(`add element ${object} { ${added.join(', ')} }`);
  }
  const gone = [...before.declarations.keys()].filter((k) => !after.declarations.has(k));
  for (const key of gone.filter((k) => k.startsWith('chain '))) {
    const chain = key.slice('chain '.length);
    if (before.rules.get(chain)?.length) out.push(`flush chain ${chain}`);
    out.push(`delete ${key}`);
  }
  for (const key of gone.filter((k) => !k.startsWith('chain '))) out.push(`delete ${key}`);
  return out.length ? out.join('\n') + '\n' : '';
}
