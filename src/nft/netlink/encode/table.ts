// A table's message: NEWTABLE, DELTABLE or DESTROYTABLE (a flush is a DELRULE of the whole table).

import type { Table } from '../../objects.js';
import type { Verb } from '../../operations.js';
import { codeOf } from '../../validate.js';
import { TABLE_ATTR } from '../attrs.js';
import { NFT_MSG, NFT_TABLE_F } from '../constants.js';
import { commentUdata } from '../udata.js';
import { WireKind } from '../wire-format.js';
import { flushRules } from './chain.js';
import { createFlags, noExprs, type MessageWriter } from './message-writer.js';

export function encodeTable(m: MessageWriter, verb: Verb, t: Table): void {
  if (verb === 'flush') return flushRules(m, t.family, t.name, undefined);
  const msg = verb === 'delete' ? NFT_MSG.DELTABLE : verb === 'destroy' ? NFT_MSG.DESTROYTABLE : NFT_MSG.NEWTABLE;
  m.begin(msg, WireKind.Table, createFlags(verb), t.family);
  const w = m.w;
  w.openList();
  w.attrStr(TABLE_ATTR.NAME, t.name);
  if (msg === NFT_MSG.NEWTABLE) {
    // nft always sends the flags, so that `add table` clears a dormant flag left by someone else.
    w.attrU32(TABLE_ATTR.FLAGS, (t.flags ?? []).reduce((acc, f) => acc | codeOf(NFT_TABLE_F, f, 'table flag'), 0));
    const ud = commentUdata(t.comment);
    if (ud) w.attrBytes(TABLE_ATTR.USERDATA, ud);
  } else if (t.handle !== undefined) w.attrU64(TABLE_ATTR.HANDLE, BigInt(t.handle));
  w.closeList();
  noExprs(w);
}
