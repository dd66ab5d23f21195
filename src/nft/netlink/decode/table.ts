// A dumped table -> Table.

import type { Table } from '../../objects.js';
import { TABLE_ATTR, UDATA } from '../attrs.js';
import { NFT_TABLE_F } from '../constants.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes, getStr, getU32, getU64Number } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

export function decodeTable(o: WireObject): Table {
  const t: Table = { family: familyOf(o), name: getStr(o.attrs, TABLE_ATTR.NAME) ?? '' };
  const flags = getU32(o.attrs, TABLE_ATTR.FLAGS) ?? 0;
  const names = (Object.keys(NFT_TABLE_F) as (keyof typeof NFT_TABLE_F)[]).filter((f) => flags & NFT_TABLE_F[f]);
  if (names.length) t.flags = names;
  const comment = udataString(parseUdata(getBytes(o.attrs, TABLE_ATTR.USERDATA)).get(UDATA.TABLE_COMMENT));
  if (comment !== undefined) t.comment = comment;
  const handle = getU64Number(o.attrs, TABLE_ATTR.HANDLE);
  if (handle !== undefined) t.handle = handle;
  return t;
}
