// Sets and maps as nft text: the declaration body and the element list, shared by the ruleset
// renderer (named sets), the rule renderer (inline anonymous sets) and the command renderer.

import type { NftSet, SetElement } from '../objects.js';
import type { Datatype, Scalar } from '../types/datatypes.js';
import { typeofText } from '../types/typeof.js';
import { renderVerdict, type Verdict } from '../types/verdict.js';
import { elementKey, encodeValues, formatRange, parseIntervalValue, splitFields } from '../values.js';
import { formatTime, quoteString } from './text.js';

export function typeText(types: readonly Datatype[]): string {
  return types.map((t) => t.name).join(' . ');
}

function fieldText(type: Datatype, value: Scalar, end: Scalar | undefined): string {
  const r = parseIntervalValue(type, value, end, `${type.name} value`);
  return formatRange(type, r.from, r.to);
}

export function elementKeyText(set: NftSet, e: SetElement): string {
  return set.key.map((t, i) => fieldText(t, e.key[i]!, e.keyEnd?.[i])).join(' . ');
}

export function elementValueText(set: NftSet, e: SetElement): string | undefined {
  if (set.objects !== undefined && Array.isArray(e.value)) return quoteString(String(e.value[0]));
  if (!set.data || e.value === undefined) return undefined;
  if (set.data === 'verdict') return renderVerdict(e.value as Verdict);
  const data = set.data;
  const bytes = encodeValues(data, e.value as Scalar[], `map ${set.name} value`);
  return splitFields(data, bytes)
    .map((b, i) => data[i]!.format(b))
    .join(' . ');
}

export function elementText(set: NftSet, e: SetElement): string {
  let s = elementKeyText(set, e);
  if (e.timeout !== undefined) s += ` timeout ${formatTime(e.timeout)}`;
  if (e.comment !== undefined) s += ` comment ${quoteString(e.comment)}`;
  const v = elementValueText(set, e);
  if (v !== undefined) s += ` : ${v}`;
  return s;
}

/** `{ a, b }`; with keysOnly, what a delete names (nft needs no data to delete an element). */
export function elementsText(set: NftSet, elements: readonly SetElement[], keysOnly = false): string {
  return `{ ${elements.map((e) => (keysOnly ? elementKeyText(set, e) : elementText(set, e))).join(', ')} }`;
}

const FLAG_ORDER = ['constant', 'dynamic', 'interval', 'timeout'] as const;

/** Elements in key order (the kernel returns hash order), for text that diffs. */
export function sortedElements(set: NftSet, elements: readonly SetElement[]): SetElement[] {
  const keyed = elements.map((e) => ({ e, k: elementKey(set, e) }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return keyed.map((x) => x.e);
}

/** The statements inside `set NAME { ... }`, one per entry, without the elements. */
export function setDeclarationLines(s: NftSet): string[] {
  const lines: string[] = [];
  const data = s.objects !== undefined ? ` : ${s.objects}` : s.data === undefined ? '' : ` : ${s.data === 'verdict' ? 'verdict' : typeText(s.data)}`;
  if (s.typeof) {
    const tdata = s.objects !== undefined ? ` : ${s.objects}` : s.data === undefined ? '' : ` : ${s.data === 'verdict' ? 'verdict' : s.typeof.data ? typeofText(s.typeof.data) : typeText(s.data)}`;
    lines.push(`typeof ${typeofText(s.typeof.key)}${tdata}`);
  } else lines.push(`type ${typeText(s.key)}${data}`);
  if (s.policy) lines.push(`policy ${s.policy}`);
  if (s.size !== undefined) lines.push(`size ${s.size}`);
  const flags = FLAG_ORDER.filter((f) => s.flags?.includes(f));
  if (flags.length) lines.push(`flags ${flags.join(',')}`);
  if (s.timeout !== undefined) lines.push(`timeout ${formatTime(s.timeout)}`);
  if (s.gcInterval !== undefined) lines.push(`gc-interval ${formatTime(s.gcInterval)}`);
  if (s.comment !== undefined) lines.push(`comment ${quoteString(s.comment)}`);
  return lines;
}
