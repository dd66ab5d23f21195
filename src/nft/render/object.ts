// Named stateful objects and flowtables as nft text: the lines of their blocks inside a table (as
// `nft list ruleset` prints them) and their `add` commands.

import { CT_L3PROTOS, type Flowtable, type NftObject } from '../named-objects.js';
import { quoteName } from '../types/verdict.js';
import { formatTime, quoteString } from './text.js';

/** The l3proto nftlink sends when none is given (encode/object.ts): the table's family. */
const defaultL3 = (family: string): string | undefined => (family in CT_L3PROTOS ? family : undefined);

/** The declaration lines of an object's block, without indentation or separators. */
export function objectLines(o: NftObject): string[] {
  switch (o.type) {
    case 'counter':
      return [`packets ${o.packets ?? 0n} bytes ${o.bytes ?? 0n}`];
    case 'quota': {
      const used = o.used !== undefined && BigInt(o.used) > 0n ? ` used ${o.used} bytes` : '';
      return [`${o.over ? 'over ' : ''}${o.bytes} bytes${used}`];
    }
    case 'limit': {
      const over = o.over ? 'over ' : '';
      if (o.unit === 'bytes') return [`rate ${over}${o.rate} bytes/${o.per}${o.burst ? ` burst ${o.burst} bytes` : ''}`];
      return [`rate ${over}${o.rate}/${o.per}${o.burst ? ` burst ${o.burst} packets` : ''}`];
    }
    case 'ct helper':
      return [`type ${quoteString(o.helper)} protocol ${o.protocol}`, ...l3Line(o)];
    case 'ct timeout': {
      const policy = Object.entries(o.policy).map(([state, seconds]) => `${state} : ${seconds}`);
      return [`protocol ${o.protocol}`, ...l3Line(o), `policy = { ${policy.join(', ')} }`];
    }
    case 'ct expectation':
      return [`protocol ${o.protocol}`, `dport ${o.dport}`, `timeout ${formatTime(o.timeout)}`, `size ${o.size}`, ...l3Line(o)];
    case 'synproxy': {
      const options = [o.timestamp ? 'timestamp' : '', o.sackPerm ? 'sack-perm' : ''].filter(Boolean);
      return [`mss ${o.mss}`, `wscale ${o.wscale}`, ...(options.length ? [options.join(' ')] : [])];
    }
    case 'secmark':
      return [quoteString(o.context)];
  }
}

function l3Line(o: { family: string; l3proto?: string }): string[] {
  // Left out when it is what encoding would send anyway, so a dump renders as what was written.
  return o.l3proto === undefined || o.l3proto === defaultL3(o.family) ? [] : [`l3proto ${o.l3proto}`];
}

/** `counter NAME {`, ... `}` inside a table block. */
export function objectBlock(o: NftObject, ind: string): string[] {
  const lines = objectLines(o).map((l) => `${ind}${ind}${l}`);
  if (o.comment !== undefined) lines.push(`${ind}${ind}comment ${quoteString(o.comment)}`);
  return [`${ind}${o.type} ${quoteName(o.name)} {`, ...lines, `${ind}}`];
}

/** `add counter inet t NAME { ... }` and the delete forms (by type and name). */
export function objectCommand(verb: string, o: Pick<NftObject, 'type' | 'family' | 'table' | 'name'> & Partial<NftObject>): string {
  const head = `${verb} ${o.type} ${o.family} ${quoteName(o.table)} ${quoteName(o.name)}`;
  if (verb !== 'add' && verb !== 'create') return head;
  const parts = objectLines(o as NftObject).map((l) => `${l};`);
  if (o.comment !== undefined) parts.push(`comment ${quoteString(o.comment)};`);
  return `${head} { ${parts.join(' ')} }`;
}

/** The devices of a flowtable or chain: `{ a, b }`. */
export function devicesText(devices: readonly string[]): string {
  // A set to the kernel, which lists them in its own order: sorted, so equal sets print alike.
  return `{ ${[...devices].sort().map(quoteName).join(", ")} }`;
}

export function flowtableLines(f: Flowtable): string[] {
  const lines = [`hook ingress priority ${f.priority}`];
  if (f.devices.length) lines.push(`devices = ${devicesText(f.devices)}`);
  if (f.flags?.includes('offload')) lines.push('flags offload');
  if (f.flags?.includes('counter')) lines.push('counter');
  return lines;
}

export function flowtableBlock(f: Flowtable, ind: string): string[] {
  return [`${ind}flowtable ${quoteName(f.name)} {`, ...flowtableLines(f).map((l) => `${ind}${ind}${l}`), `${ind}}`];
}

export function flowtableCommand(verb: string, f: Flowtable): string {
  const head = `${verb} flowtable ${f.family} ${quoteName(f.table)} ${quoteName(f.name)}`;
  if (verb !== 'add' && verb !== 'create') return head;
  return `${head} { ${flowtableLines(f)
    .map((l) => `${l};`)
    .join(' ')} }`;
}
