// One table of an nft -f text as a model that ignores what cannot matter to the kernel: the order
// of objects and of elements, spacing, and spellings that nft reads as the same thing. The order of
// rules inside a chain is kept (it matters). kube-proxy's unit-test goldens (knftables' dump, the
// input syntax) and `nftlink render` (nft's listing syntax) write the same ruleset differently:
// `mark set mark or 0x4000` / `meta mark set meta mark | 0x00004000`, `reject` / `reject with icmp
// port-unreachable`, `timeout 10800s` / `timeout 3h`, `a , b` / `a, b`, `policy accept` spelled out
// or left to its default, `ip daddr { 172.30.0.0/16 }` / `ip daddr 172.30.0.0/16` (nft loads a set of
// one as the plain comparison).

export interface ChainModel {
  /** `{ type ... hook ... priority ...; }`, a comment, or '' for a regular chain. */
  decl: string;
  rules: string[];
}

export interface TableModel {
  table: string;
  /** `set` or `map`, with the declaration. */
  sets: Map<string, string>;
  chains: Map<string, ChainModel>;
  elements: Map<string, Set<string>>;
}

export function emptyTable(): TableModel {
  return { table: '', sets: new Map(), chains: new Map(), elements: new Map() };
}

/** The model of table `kube-proxy` of `family` in `text`; lines of other tables are ignored. */
export function parseTable(text: string, family: 'ip' | 'ip6' = 'ip', table = 'kube-proxy'): TableModel {
  const m = emptyTable();
  const prefix = `${family} ${table}`;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const head = /^add (table|set|map|chain|rule|element) (\S+ \S+)(?: (.*))?$/.exec(line);
    if (!head) throw new Error(`cannot read: ${line}`);
    const [, kind, where, rest = ''] = head;
    if (where !== prefix) continue;
    if (kind === 'table') {
      m.table = normaliseDecl(rest);
      continue;
    }
    const sp = rest.indexOf(' ');
    const name = sp < 0 ? rest : rest.slice(0, sp);
    const body = sp < 0 ? '' : rest.slice(sp + 1);
    switch (kind) {
      case 'set':
      case 'map':
        m.sets.set(name, `${kind} ${normaliseDecl(body)}`);
        break;
      case 'chain':
        chainOf(m, name).decl = normaliseDecl(body);
        break;
      case 'rule':
        chainOf(m, name).rules.push(normaliseRule(body, family));
        break;
      case 'element': {
        const inner = /^\{(.*)\}$/.exec(body.trim());
        if (!inner) throw new Error(`cannot read elements: ${line}`);
        const set = m.elements.get(name) ?? new Set<string>();
        for (const e of splitTopLevel(inner[1]!)) set.add(normaliseSpacing(e));
        m.elements.set(name, set);
        break;
      }
    }
  }
  return m;
}

function chainOf(m: TableModel, name: string): ChainModel {
  let c = m.chains.get(name);
  if (!c) m.chains.set(name, (c = { decl: '', rules: [] }));
  return c;
}

/** Splits on commas outside quotes and braces (an element's comment may hold a comma). */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '{') depth++;
    else if (!quoted && ch === '}') depth--;
    else if (!quoted && depth === 0 && ch === ',') {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

export function normaliseSpacing(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/ ,/g, ',').replace(/ ;/g, ';').trim();
}

/** `{ a ; b ; }` -> `{ a; b; }`, without the default `policy accept;`, timeouts in nft's units. */
function normaliseDecl(s: string): string {
  return normaliseSpacing(s)
    .replace(/ policy accept;/, '')
    .replace(/timeout (\d+)s\b/g, (_, n: string) => `timeout ${nftDuration(Number(n))}`);
}

/** Seconds as nft lists them: 10800 -> 3h, 90 -> 1m30s. */
export function nftDuration(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.length ? parts.join('') : '0s';
}

const hex8 = (v: string): string => `0x${Number.parseInt(v, 16).toString(16).padStart(8, '0')}`;

/** knftables' input spellings -> nft's listing of the same expressions. */
export function normaliseRule(rule: string, family: 'ip' | 'ip6'): string {
  return normaliseSpacing(rule)
    .replace(/\bmark set mark or (0x[0-9a-f]+)/g, (_, v: string) => `meta mark set meta mark | ${hex8(v)}`)
    .replace(/\bmark set mark xor (0x[0-9a-f]+)/g, (_, v: string) => `meta mark set meta mark ^ ${hex8(v)}`)
    .replace(/\bmark and (0x[0-9a-f]+) == 0\b/g, (_, v: string) => `meta mark & ${hex8(v)} == 0x00000000`)
    .replace(/\bmeta meta mark/g, 'meta mark')
    .replace(/\breject$/, `reject with ${family === 'ip' ? 'icmp' : 'icmpv6'} port-unreachable`)
    .replace(/\breject comment/, `reject with ${family === 'ip' ? 'icmp' : 'icmpv6'} port-unreachable comment`)
    .replace(/\bdnat ip6? to /, 'dnat to ')
    // nft loads a one-element anonymous set as a plain comparison (how kube-proxy's `{ CIDR }` reaches the kernel).
    .replace(/\{ ([0-9a-f.:]+(?:\/\d+)?) \}/g, '$1');
}

/** Every statement of the model as one sorted line each, for a readable difference. */
export function modelLines(m: TableModel): string[] {
  const lines = [`table ${m.table}`];
  for (const [name, decl] of m.sets) lines.push(`${decl.split(' ')[0]} ${name} ${decl.slice(decl.indexOf(' ') + 1)}`);
  for (const [name, c] of m.chains) {
    lines.push(`chain ${name}${c.decl ? ` ${c.decl}` : ''}`);
    c.rules.forEach((r, i) => lines.push(`rule ${name} #${i + 1} ${r}`));
  }
  for (const [name, els] of m.elements) for (const e of els) lines.push(`element ${name} { ${e} }`);
  return lines.sort();
}

export function cloneTable(m: TableModel): TableModel {
  return {
    table: m.table,
    sets: new Map(m.sets),
    chains: new Map([...m.chains].map(([k, c]) => [k, { decl: c.decl, rules: [...c.rules] }])),
    elements: new Map([...m.elements].map(([k, s]) => [k, new Set(s)])),
  };
}
