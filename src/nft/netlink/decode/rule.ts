// A dumped rule (or one read back from a request) -> Rule, its expressions decoded by expr/.

import { decodeExpr } from '../../expr/index.js';
import type { Rule } from '../../objects.js';
import { EXPRS_DIGEST_BYTES, readDigest } from '../../rule-digest.js';
import { RULE_ATTR, UDATA } from '../attrs.js';
import { forEachUdata, udataString } from '../udata.js';
import { getBytes, getStr, getU64Number } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

/**
 * `exprsOmitted`: the dump left out the expressions of the rules that carry a digest
 * (DumpOptions.ruleExprs): those get the digest instead.
 */
export function decodeRule(o: WireObject, exprsOmitted = false): Rule {
  const r: Rule = {
    family: familyOf(o),
    table: getStr(o.attrs, RULE_ATTR.TABLE) ?? '',
    chain: getStr(o.attrs, RULE_ATTR.CHAIN) ?? '',
    exprs: o.exprs.map(decodeExpr),
  };
  forEachUdata(getBytes(o.attrs, RULE_ATTR.USERDATA), (type, value) => {
    if (type === UDATA.RULE_COMMENT) r.comment = udataString(value);
    else if (type === UDATA.RULE_TAG) r.tag = udataString(value);
    else if (type === UDATA.RULE_EXPRS_DIGEST && exprsOmitted && value.length === EXPRS_DIGEST_BYTES) r.exprsDigest = readDigest(value);
  });
  const handle = getU64Number(o.attrs, RULE_ATTR.HANDLE);
  if (handle !== undefined) r.handle = handle;
  return r;
}
