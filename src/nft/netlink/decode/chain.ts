// A dumped chain (or one read back from a request) -> Chain.

import type { Chain, ChainType } from '../../objects.js';
import { CHAIN_ATTR, UDATA } from '../attrs.js';
import { devicesOf, hookName } from '../hooks.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes, getS32, getStr, getU32, getU64Number } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

export function decodeChain(o: WireObject): Chain {
  const c: Chain = {
    family: familyOf(o),
    table: getStr(o.attrs, CHAIN_ATTR.TABLE) ?? '',
    name: getStr(o.attrs, CHAIN_ATTR.NAME) ?? '',
  };
  const hook = getU32(o.attrs, CHAIN_ATTR.HOOKNUM);
  if (hook !== undefined) {
    c.base = {
      type: (getStr(o.attrs, CHAIN_ATTR.TYPE) ?? 'filter') as ChainType,
      hook: hookName(c.family, hook) ?? 'prerouting',
      priority: getS32(o.attrs, CHAIN_ATTR.PRIO) ?? 0,
    };
    const dev = getStr(o.attrs, CHAIN_ATTR.DEV);
    const devices = dev !== undefined ? [dev] : devicesOf(getBytes(o.attrs, CHAIN_ATTR.DEVICES));
    if (devices.length) c.base.devices = devices;
    const policy = getU32(o.attrs, CHAIN_ATTR.POLICY);
    if (policy !== undefined) c.base.policy = policy === 1 ? 'accept' : 'drop';
  }
  const comment = udataString(parseUdata(getBytes(o.attrs, CHAIN_ATTR.USERDATA)).get(UDATA.CHAIN_COMMENT));
  if (comment !== undefined) c.comment = comment;
  const handle = getU64Number(o.attrs, CHAIN_ATTR.HANDLE);
  if (handle !== undefined) c.handle = handle;
  return c;
}
