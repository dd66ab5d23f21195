// Operations read back from a request buffer (the request and a dump share one format).

import type { Operation } from '../../operations.js';
import { RULE_ATTR } from '../attrs.js';
import { NFT_MSG, NLM_F } from '../constants.js';
import { getU64Number } from './attr-values.js';
import { decodeChain } from './chain.js';
import { decodeRule } from './rule.js';
import { WireReader } from './wire-reader.js';

/**
 * A chain or rule operation read back from the request it was encoded into, at `at` (where its one
 * message starts). A transaction keeps no other copy of these (Transaction.queue says which), so
 * this is how render() and error messages see them. The verb is in the message: NEWCHAIN with
 * NLM_F_EXCL is a create; NEWRULE with NLM_F_REPLACE a replace, with NLM_F_APPEND an add, else an
 * insert (as RequestEncoder writes them).
 */
export function decodeRequestOperation(buf: Uint8Array, at: number): Operation {
  const reader = new WireReader(buf);
  reader.pos = at;
  const o = reader.object(true);
  if (o.msgType === NFT_MSG.NEWCHAIN) return { verb: o.nlFlags & NLM_F.EXCL ? 'create' : 'add', kind: 'chain', chain: decodeChain(o) };
  if (o.msgType === NFT_MSG.NEWRULE) {
    const rule = decodeRule(o);
    const position = getU64Number(o.attrs, RULE_ATTR.POSITION);
    if (position !== undefined) rule.position = position;
    const verb = o.nlFlags & NLM_F.REPLACE ? 'replace' : o.nlFlags & NLM_F.APPEND ? 'add' : 'insert';
    return { verb, kind: 'rule', rule };
  }
  throw new Error(`nftlink: internal error: message type ${o.msgType} at byte ${at} of a request is not a chain or rule to read back`);
}
