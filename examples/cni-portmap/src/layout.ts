// The nftables objects nftlink-portmap writes, as plain library objects: one inet table shared by
// every attachment, and two chains of each attachment's own. Pure: nothing here talks to the kernel.
//
//   table inet nftlink-portmap
//     chain prerouting   nat, prerouting, dstnat   fib daddr type local jump hostports
//     chain output       nat, output, dstnat       fib daddr type local jump hostports
//     chain postrouting  nat, postrouting, srcnat  (one rule per attachment) ct status dnat jump pm-<id>-snat
//     chain hostports                              (one rule per attachment) jump pm-<id>-dnat
//     chain pm-<id>-dnat  the attachment's mappings: [ip daddr HOSTIP] tcp dport 8080 dnat ip to 198.18.10.2:80
//     chain pm-<id>-snat  masquerade what reaches the container through a host port from its own subnet
//                         (hairpin) or from 127.0.0.0/8 (the host's localhost)

import { createHash } from 'node:crypto';
import { ct, fibType, ip, ip6, meta, rule, sctp, tcp, udp, type Chain, type Field, type Rule, type Table } from 'nftlink';
import type { ContainerAddress, PortMapConfig, Protocol } from './config.js';

export const TABLE: Table = { family: 'inet', name: 'nftlink-portmap', comment: 'CNI hostPort mappings (nftlink-portmap)' };
const T = { family: TABLE.family, table: TABLE.name } as const;

/** The table's shared chains: base chains at the priorities nft calls dstnat (-100) and srcnat (100). */
// Regular chains first: a transaction that adds them all adds the jump targets before the jumps.
export const SHARED = {
  hostports: { ...T, name: 'hostports' },
  prerouting: { ...T, name: 'prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100, policy: 'accept' } },
  output: { ...T, name: 'output', base: { type: 'nat', hook: 'output', priority: -100, policy: 'accept' } },
  postrouting: { ...T, name: 'postrouting', base: { type: 'nat', hook: 'postrouting', priority: 100, policy: 'accept' } },
} as const satisfies Record<string, Chain>;

/** The fixed rules of the shared chains (postrouting and hostports hold only attachments' jumps). */
export function sharedRules(chain: keyof typeof SHARED): Rule[] {
  if (chain !== 'prerouting' && chain !== 'output') return [];
  // Only packets to one of the host's own addresses are host-port traffic, as in upstream.
  return [rule(TABLE.family).match(fibType('daddr'), 'local').jump(SHARED.hostports.name).rule(TABLE.name, chain)];
}

/** Chains of attachments are named by this prefix and a hash of the attachment's identity. */
export const ATTACHMENT_PREFIX = 'pm-';

/** CNI identifies an attachment by network name, container ID and interface name (spec 1.0, "Attachment"). */
export interface Attachment {
  network: string;
  containerId: string;
  ifname: string;
}

export interface AttachmentChains {
  dnat: Chain;
  snat: Chain;
  /** What the jump rules to the attachment's chains carry, for a reader of `nft list ruleset`. */
  comment: string;
}

const COMMENT_MAX = 128; // bytes nft keeps of a comment (NFTNL_UDATA_COMMENT_MAXLEN)

export function attachmentChains(a: Attachment): AttachmentChains {
  // A hash keeps the name short and free of characters nft's grammar would need quoted; 64 bits
  // make a collision between the attachments of one host out of reach.
  const id = createHash('sha256').update(`${a.network}\0${a.containerId}\0${a.ifname}`).digest('hex').slice(0, 16);
  let comment = `${a.network} ${a.containerId} ${a.ifname}`;
  while (Buffer.byteLength(comment) > COMMENT_MAX) comment = comment.slice(0, -1);
  return {
    dnat: { ...T, name: `${ATTACHMENT_PREFIX}${id}-dnat` },
    snat: { ...T, name: `${ATTACHMENT_PREFIX}${id}-snat` },
    comment,
  };
}

/** The jumps from the shared chains into the attachment's chains. */
export function jumpRules(chains: AttachmentChains, snat: boolean): Rule[] {
  const out = [rule(TABLE.family).jump(chains.dnat.name).rule(TABLE.name, SHARED.hostports.name, chains.comment)];
  if (snat) {
    out.push(rule(TABLE.family).match(ct.status, 'dnat').jump(chains.snat.name).rule(TABLE.name, SHARED.postrouting.name, chains.comment));
  }
  return out;
}

const PORT: Record<Protocol, Field> = { tcp: tcp.dport, udp: udp.dport, sctp: sctp.dport };
const DADDR = { ip: ip.daddr, ip6: ip6.daddr } as const;
const SADDR = { ip: ip.saddr, ip6: ip6.saddr } as const;

/**
 * The DNAT rules of an attachment: each mapping once per container address of a family it applies
 * to. A hostIP of the other family leaves that address out, as upstream does; an unspecified one
 * (0.0.0.0, ::) takes every local address of its family.
 */
export function dnatRules(chains: AttachmentChains, conf: Pick<PortMapConfig, 'mappings' | 'addresses'>): Rule[] {
  const out: Rule[] = [];
  for (const m of conf.mappings) {
    const hostFamily = m.hostIP === undefined ? undefined : m.hostIP.includes(':') ? 'ip6' : 'ip';
    for (const addr of conf.addresses) {
      if (hostFamily !== undefined && hostFamily !== addr.family) continue;
      const r = rule(TABLE.family);
      if (m.hostIP !== undefined && m.hostIP !== '0.0.0.0' && m.hostIP !== '::') r.match(DADDR[addr.family], m.hostIP);
      else r.match(meta.nfproto, addr.family === 'ip' ? 'ipv4' : 'ipv6');
      r.match(PORT[m.protocol], m.hostPort).dnat({ family: addr.family, addr: addr.address, port: m.containerPort });
      out.push(r.rule(TABLE.name, chains.dnat.name));
    }
  }
  return out;
}

/**
 * The masquerade rules of an attachment. A connection that reached the container through a host
 * port from its own subnet (itself, or a neighbour on the same bridge) must come back through the
 * host, so its source becomes the host's; so must one from 127.0.0.0/8, which cannot leave the
 * host with that source (with route_localnet on the container's host interface, see sysctl.ts).
 */
export function snatRules(chains: AttachmentChains, addresses: readonly ContainerAddress[]): Rule[] {
  const out: Rule[] = [];
  const masq = (addr: ContainerAddress, from: string): Rule =>
    rule(TABLE.family).match(SADDR[addr.family], from).match(DADDR[addr.family], addr.address).masquerade().rule(TABLE.name, chains.snat.name);
  for (const addr of addresses) {
    out.push(masq(addr, addr.subnet));
    if (addr.family === 'ip') out.push(masq(addr, '127.0.0.0/8'));
  }
  return out;
}
