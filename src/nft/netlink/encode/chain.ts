// A chain's message (NEWCHAIN with its hook for a base chain), and the DELRULE that flushes a chain or a table.

import { CHAIN_POLICIES, CHAIN_TYPES, type Chain } from '../../objects.js';
import type { Verb } from '../../operations.js';
import { checkInteger, checkOneOf } from '../../validate.js';
import { CHAIN_ATTR, RULE_ATTR } from '../attrs.js';
import { NFT_MSG } from '../constants.js';
import { checkDevices, devicesBytes, hookNumber } from '../hooks.js';
import { commentUdata } from '../udata.js';
import { WireKind } from '../wire-format.js';
import { createFlags, noExprs, type MessageWriter } from './message-writer.js';

export function encodeChain(m: MessageWriter, verb: Verb, c: Chain): void {
  if (verb === 'flush') return flushRules(m, c.family, c.table, c.name);
  const msg = verb === 'delete' ? NFT_MSG.DELCHAIN : verb === 'destroy' ? NFT_MSG.DESTROYCHAIN : NFT_MSG.NEWCHAIN;
  m.begin(msg, WireKind.Chain, createFlags(verb), c.family);
  const w = m.w;
  w.openList();
  w.attrStr(CHAIN_ATTR.TABLE, c.table);
  w.attrStr(CHAIN_ATTR.NAME, c.name);
  if (msg === NFT_MSG.NEWCHAIN) {
    if (c.base) {
      const { type, hook, priority, policy } = c.base;
      checkOneOf(type, CHAIN_TYPES, 'chain type');
      checkInteger(priority, -(2 ** 31), 2 ** 31 - 1, 'chain priority');
      w.attrStr(CHAIN_ATTR.TYPE, type);
      w.attrU32(CHAIN_ATTR.HOOKNUM, hookNumber(c.family, hook, 'chain hook'));
      w.attrS32(CHAIN_ATTR.PRIO, priority);
      writeChainDevices(w, c);
      if (policy !== undefined) {
        // Checked first: anything but 'accept' would otherwise go out as 0, a dropping chain.
        checkOneOf(policy, CHAIN_POLICIES, 'chain policy');
        w.attrU32(CHAIN_ATTR.POLICY, policy === 'accept' ? 1 : 0);
      }
    }
    const ud = commentUdata(c.comment);
    if (ud) w.attrBytes(CHAIN_ATTR.USERDATA, ud);
  } else if (c.handle !== undefined) w.attrU64(CHAIN_ATTR.HANDLE, BigInt(c.handle));
  w.closeList();
  noExprs(w);
}

/**
 * An ingress chain's devices: one as NFTNL_CHAIN_DEV, several as NFTNL_CHAIN_DEVICES, as nft sends
 * them (a kernel before 5.5 knows only the single one).
 */
function writeChainDevices(w: MessageWriter['w'], c: Chain): void {
  const devices = c.base?.devices;
  const ingress = c.base?.hook === 'ingress' || c.base?.hook === 'egress';
  if (devices === undefined) {
    if (ingress && c.family === 'netdev') throw new RangeError(`netdev chain ${c.name} hooks at ${c.base!.hook} and needs its devices`);
    return;
  }
  if (!ingress) throw new RangeError(`chain ${c.name} lists devices, which only ingress and egress chains take (hook ${c.base!.hook})`);
  checkDevices(devices, `chain ${c.name}`, true);
  if (devices.length === 1) w.attrStr(CHAIN_ATTR.DEV, devices[0]!);
  else w.attrBytes(CHAIN_ATTR.DEVICES, devicesBytes(devices));
}

/** The rules of a chain, or of every chain of a table when `chain` is undefined, deleted. */
export function flushRules(m: MessageWriter, family: string, table: string, chain: string | undefined): void {
  m.begin(NFT_MSG.DELRULE, WireKind.Rule, 0, family);
  const w = m.w;
  w.openList();
  w.attrStr(RULE_ATTR.TABLE, table);
  if (chain !== undefined) w.attrStr(RULE_ATTR.CHAIN, chain);
  w.closeList();
  noExprs(w);
}
