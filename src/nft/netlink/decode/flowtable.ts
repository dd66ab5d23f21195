// A dumped flowtable -> Flowtable.

import { FLOWTABLE_FLAGS, type Flowtable } from '../../named-objects.js';
import { FLOWTABLE_ATTR } from '../attrs.js';
import { devicesOf } from '../hooks.js';
import { getBytes, getS32, getStr, getU32, getU64Number } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

export function decodeFlowtable(o: WireObject): Flowtable {
  const f: Flowtable = {
    family: familyOf(o),
    table: getStr(o.attrs, FLOWTABLE_ATTR.TABLE) ?? '',
    name: getStr(o.attrs, FLOWTABLE_ATTR.NAME) ?? '',
    hook: 'ingress',
    priority: getS32(o.attrs, FLOWTABLE_ATTR.PRIO) ?? 0,
    devices: devicesOf(getBytes(o.attrs, FLOWTABLE_ATTR.DEVICES)),
  };
  const flags = getU32(o.attrs, FLOWTABLE_ATTR.FLAGS) ?? 0;
  const names = (Object.keys(FLOWTABLE_FLAGS) as (keyof typeof FLOWTABLE_FLAGS)[]).filter((k) => flags & FLOWTABLE_FLAGS[k]);
  if (names.length) f.flags = names;
  const handle = getU64Number(o.attrs, FLOWTABLE_ATTR.HANDLE);
  if (handle !== undefined) f.handle = handle;
  return f;
}
