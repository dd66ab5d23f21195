// A flowtable's message: NEWFLOWTABLE with its hook (always ingress), priority and devices,
// DELFLOWTABLE or DESTROYFLOWTABLE by name (or handle).

import { FLOWTABLE_FLAGS, type Flowtable } from '../../named-objects.js';
import type { Verb } from '../../operations.js';
import { checkInteger, codeOf } from '../../validate.js';
import { FLOWTABLE_ATTR } from '../attrs.js';
import { NF_NETDEV_HOOK, NFT_MSG } from '../constants.js';
import { checkDevices, devicesBytes } from '../hooks.js';
import { WireKind } from '../wire-format.js';
import { createFlags, noExprs, type MessageWriter } from './message-writer.js';

export function encodeFlowtable(m: MessageWriter, verb: Verb, f: Flowtable): void {
  if (verb !== 'add' && verb !== 'create' && verb !== 'delete' && verb !== 'destroy') throw new RangeError(`${verb} does not apply to flowtables`);
  const msg = verb === 'delete' ? NFT_MSG.DELFLOWTABLE : verb === 'destroy' ? NFT_MSG.DESTROYFLOWTABLE : NFT_MSG.NEWFLOWTABLE;
  m.begin(msg, WireKind.Flowtable, createFlags(verb), f.family);
  const w = m.w;
  w.openList();
  w.attrStr(FLOWTABLE_ATTR.TABLE, f.table);
  w.attrStr(FLOWTABLE_ATTR.NAME, f.name);
  if (msg === NFT_MSG.NEWFLOWTABLE) {
    const what = `flowtable ${f.name}`;
    if (f.hook !== undefined && f.hook !== 'ingress') throw new RangeError(`${what} hook ${JSON.stringify(f.hook)} is not ingress, the only flowtable hook`);
    checkInteger(f.priority, -(2 ** 31), 2 ** 31 - 1, `${what} priority`);
    checkDevices(f.devices, what, false);
    w.attrU32(FLOWTABLE_ATTR.HOOKNUM, NF_NETDEV_HOOK.ingress);
    w.attrS32(FLOWTABLE_ATTR.PRIO, f.priority);
    if (f.devices.length) w.attrBytes(FLOWTABLE_ATTR.DEVICES, devicesBytes(f.devices));
    if (f.flags?.length) w.attrU32(FLOWTABLE_ATTR.FLAGS, f.flags.reduce((acc, x) => acc | codeOf(FLOWTABLE_FLAGS, x, `${what} flag`), 0));
  } else if (f.handle !== undefined) w.attrU64(FLOWTABLE_ATTR.HANDLE, BigInt(f.handle));
  w.closeList();
  noExprs(w);
}
