// The differences between kube-proxy's stored unit-test goldens (test/fixtures/proxy/upstream/
// README.md says which version) and the kube-proxy 1.37 ruleset that `--layout kube-proxy` writes,
// each as a rewrite of the golden into the newer shape, with the upstream change that explains it.
// A rewrite is exact (it builds the newer rules from the golden's own addresses and chains), so the
// test fails on anything else that differs. Each entry must change at least one golden: an entry
// that explains nothing is stale and fails the test too.

import type { TableModel } from './nft-model.js';

export interface KnownDifference {
  id: string;
  /** The upstream change, as `kubernetes/kubernetes#N`, or why no change is involved. */
  upstream: string;
  why: string;
  /** Rewrites `m` in place; returns how many objects it changed. */
  apply(m: TableModel): number;
}

const MARK = 'meta mark set meta mark | 0x00004000';

/** Chains named in a rule or a map element of `m` (jump, goto, vmap). */
function referencedChains(m: TableModel): Set<string> {
  const out = new Set<string>();
  const scan = (s: string) => {
    for (const x of s.matchAll(/(?:goto|jump) (\S+?)(?=[ ,}]|$)/g)) out.add(x[1]!);
  };
  for (const c of m.chains.values()) c.rules.forEach(scan);
  for (const els of m.elements.values()) els.forEach(scan);
  return out;
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    id: 'stale-chains',
    upstream: 'none: sync history, not a version difference',
    why:
      'After a service or endpoint goes away, kube-proxy flushes its chains and deletes them at a later sync ' +
      '(staleChains); the goldens taken between the two syncs hold them empty. A render is the state with no ' +
      'history, so it has none; nftlink flushes and deletes its own stale chains the same way (src/proxy/sync/stale-chains.ts).',
    apply(m) {
      const used = referencedChains(m);
      let n = 0;
      for (const [name, c] of m.chains) {
        if (c.rules.length === 0 && c.decl === '' && !used.has(name)) {
          m.chains.delete(name);
          n++;
        }
      }
      return n;
    },
  },
  {
    id: 'mark-for-masquerade-inlined',
    upstream: 'kubernetes/kubernetes#135800',
    why:
      'The `mark-for-masquerade` chain is gone: every `jump mark-for-masquerade` became the mark statement ' +
      'itself, and `masquerading` became one rule that tests, clears (xor, see #92035) and masquerades.',
    apply(m) {
      let n = 0;
      if (m.chains.delete('mark-for-masquerade')) n++;
      for (const c of m.chains.values()) {
        c.rules = c.rules.map((r) => {
          const s = r.replace(/\bjump mark-for-masquerade\b/, MARK);
          if (s !== r) n++;
          return s;
        });
      }
      const masq = m.chains.get('masquerading');
      const old = [
        'meta mark & 0x00004000 == 0x00000000 return',
        'meta mark set meta mark ^ 0x00004000',
        'masquerade fully-random',
      ];
      if (masq && JSON.stringify(masq.rules) === JSON.stringify(old)) {
        masq.rules = ['meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random'];
        n++;
      }
      return n;
    },
  },
  {
    id: 'hairpin-connections-set',
    upstream: 'kubernetes/kubernetes#136499 (follow-up to #135800)',
    why:
      'An endpoint chain no longer marks its own hairpin traffic (`ip saddr EP` + mark): every endpoint ' +
      'goes into the `hairpin-connections` set as `EP . EP . proto . port`, and `masquerading` masquerades ' +
      'DNATed connections found in it.',
    apply(m) {
      let n = 0;
      const hairpin = new Set<string>();
      for (const [name, c] of m.chains) {
        if (!name.startsWith('endpoint-')) continue;
        const dnat = c.rules.map((r) => /^meta l4proto (\w+) dnat to (\S+):(\d+)$/.exec(r)).find((x) => x);
        const before = c.rules.length;
        c.rules = c.rules.filter((r) => !/^ip saddr [0-9.]+ meta mark set meta mark \| 0x00004000$/.test(r));
        if (c.rules.length !== before && dnat) {
          hairpin.add(`${dnat[2]} . ${dnat[2]} . ${dnat[1]} . ${dnat[3]}`);
          n++;
        }
      }
      // The set and the rule are part of the base ruleset, endpoints or not.
      if (!m.chains.has('masquerading') || m.sets.has('hairpin-connections')) return n;
      n++;
      m.sets.set('hairpin-connections', 'set { type ipv4_addr . ipv4_addr . inet_proto . inet_service; comment "service hairpin connections"; }');
      m.elements.set('hairpin-connections', hairpin);
      m.chains.get('masquerading')?.rules.push('ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random');
      return n;
    },
  },
  {
    id: 'clusterip-masquerade-in-services',
    upstream: 'kubernetes/kubernetes#136499 (as far as the stored material shows; 1.36, listed on a 1.36.2 node)',
    why:
      'The per-service-chain rule `ip daddr CLUSTER-IP ip saddr != POD-CIDR` + mark became one rule at the top ' +
      'of `services`, `ip daddr @cluster-ips ip saddr != POD-CIDR` + mark, with a comment.',
    apply(m) {
      let n = 0;
      let cidr: string | undefined;
      for (const [name, c] of m.chains) {
        if (!name.startsWith('service-')) continue;
        c.rules = c.rules.filter((r) => {
          const x = /^ip daddr [0-9.]+ ip saddr != (\S+) meta mark set meta mark \| 0x00004000$/.exec(r);
          if (!x) return true;
          cidr = x[1];
          n++;
          return false;
        });
      }
      if (cidr) m.chains.get('services')?.rules.unshift(`ip daddr @cluster-ips ip saddr != ${cidr} ${MARK} comment "masquerade clusterIP traffic from outside cluster"`);
      return n;
    },
  },
  {
    id: 'endpoint-chains-only-for-affinity',
    upstream: 'kubernetes/kubernetes#136499 (as far as the stored material shows; 1.36, listed on a 1.36.2 node)',
    why:
      'Once hairpin masquerading moved to the set, an endpoint chain of a service without ClientIP affinity ' +
      'held only its DNAT: the service (or local) chain DNATs itself, `numgen random mod N map { i : addr . port }`, ' +
      'and the endpoint chains are gone. Affinity services keep them (they write the affinity sets).',
    apply(m) {
      let n = 0;
      const drop = new Set<string>();
      for (const [name, c] of m.chains) {
        if (!/^(service|local)-/.test(name) || c.rules.some((r) => r.includes('@affinity-'))) continue;
        c.rules = c.rules.map((r) => {
          const v = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(r);
          if (!v) return r;
          let proto = '';
          const targets = v[2]!.split(', ').map((e) => {
            const [, i, chain] = /^(\d+) : goto (\S+)$/.exec(e)!;
            const ep = m.chains.get(chain!);
            const d = ep?.rules.length === 1 ? /^meta l4proto (\w+) dnat to (\S+):(\d+)$/.exec(ep.rules[0]!) : null;
            if (!d) throw new Error(`endpoint chain ${chain} is not one DNAT rule: ${JSON.stringify(ep?.rules)}`);
            proto = d[1]!;
            drop.add(chain!);
            return `${i} : ${d[2]} . ${d[3]}`;
          });
          n++;
          return `meta l4proto ${proto} dnat ip addr . port to numgen random mod ${v[1]} map { ${targets.join(', ')} }`;
        });
      }
      for (const c of drop) m.chains.delete(c);
      return n;
    },
  },
  {
    id: 'single-endpoint-direct-dnat',
    upstream: 'kubernetes/kubernetes#140723 (1.37; nft-acceptable text for IPv6 from #140960)',
    why: 'A service or local chain with one endpoint DNATs to it directly, without numgen and map.',
    apply(m) {
      let n = 0;
      for (const c of m.chains.values()) {
        c.rules = c.rules.map((r) => {
          const x = /^meta l4proto (\w+) dnat ip addr \. port to numgen random mod 1 map \{ 0 : (\S+) \. (\d+) \}$/.exec(r);
          if (!x) return r;
          n++;
          return `meta l4proto ${x[1]} dnat to ${x[2]}:${x[3]}`;
        });
      }
      return n;
    },
  },
];
