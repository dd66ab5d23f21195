// Verdicts: what immediate expressions and verdict-map elements carry.

import { VERDICT_CODE } from '../netlink/constants.js';

export type Verdict =
  | { kind: 'accept' | 'drop' | 'return' | 'continue' }
  | { kind: 'jump' | 'goto'; chain: string };

export type VerdictKind = Verdict['kind'];

const KIND_BY_CODE = new Map<number, VerdictKind>(
  (Object.entries(VERDICT_CODE) as [string, number][])
    .filter(([k]) => k !== 'break')
    .map(([k, v]) => [v, k as VerdictKind]),
);

export function verdictCode(v: Verdict): number {
  return VERDICT_CODE[v.kind];
}

export function verdictFromCode(code: number, chain: string | undefined): Verdict {
  const kind = KIND_BY_CODE.get(code >>> 0);
  if (!kind) throw new Error(`nftlink: unknown verdict code ${code | 0}`);
  if (kind === 'jump' || kind === 'goto') {
    if (chain === undefined) throw new Error(`nftlink: ${kind} verdict without a chain`);
    return { kind, chain };
  }
  return { kind };
}

export function renderVerdict(v: Verdict): string {
  return v.kind === 'jump' || v.kind === 'goto' ? `${v.kind} ${quoteName(v.chain)}` : v.kind;
}

/** Names that nft's scanner would not read as one identifier are quoted. */
export function quoteName(name: string): string {
  return /^[a-zA-Z_][a-zA-Z0-9_./-]*$/.test(name) && !RESERVED.has(name) ? name : JSON.stringify(name);
}

// Words nft's grammar reserves that are likely as object names; quoting them keeps `nft -f` happy.
const RESERVED = new Set(['table', 'chain', 'set', 'map', 'rule', 'type', 'hook', 'priority', 'policy', 'flags', 'elements', 'size', 'timeout', 'comment', 'counter', 'accept', 'drop', 'return', 'jump', 'goto', 'continue', 'ip', 'ip6', 'inet', 'meta', 'ct', 'tcp', 'udp', 'th', 'filter', 'nat', 'route', 'dnat', 'snat', 'masquerade', 'reject', 'log', 'limit', 'fib', 'numgen', 'update', 'add', 'delete', 'define', 'include', 'flush', 'insert', 'replace', 'create', 'destroy', 'list', 'reset', 'monitor', 'export', 'describe', 'mark', 'dynamic', 'interval', 'constant', 'netdev', 'arp', 'bridge', 'vmap', 'to', 'at', 'with', 'sctp', 'icmp', 'icmpv6', 'icmpx', 'ether', 'vlan', 'state', 'status', 'random', 'inc', 'mod', 'offset', 'fully-random', 'persistent', 'daddr', 'saddr', 'dport', 'sport', 'protocol', 'typeof', 'devices', 'auto-merge', 'local']);
