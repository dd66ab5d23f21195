// A dumped rule (or one read back from a request) -> Rule, its expressions decoded by expr/.

import { decodeExpr } from '../../expr/index.js';
import type { Rule } from '../../objects.js';
import { RULE_ATTR, UDATA } from '../attrs.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes, getStr, getU64Number } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

export function decodeRule(o: WireObject): Rule {
  const r: Rule = {
    family: familyOf(o),
    table: getStr(o.attrs, RULE_ATTR.TABLE) ?? '',
    chain: getStr(o.attrs, RULE_ATTR.CHAIN) ?? '',
    exprs: o.exprs.map(decodeExpr),
  };
  const comment = udataString(parseUdata(getBytes(o.attrs, RULE_ATTR.USERDATA)).get(UDATA.RULE_COMMENT));
  if (comment !== undefined) r.comment = comment;
  const handle = getU64Number(o.attrs, RULE_ATTR.HANDLE);
  if (handle !== undefined) r.handle = handle;
  return r;
}
