// A rule's message; a rule with inline anonymous sets is preceded by their NEWSET and NEWSETELEM
// messages, as nft sends it, and refers to them by transaction id. A new rule's userdata holds its
// comment (where nft keeps it), its tag, and the digest of its expressions (rule-digest.ts).

import { encodeExpr, type Expr } from '../../expr/index.js';
import { checkWritable, elementsDigestOf } from '../../inline-set.js';
import type { NftSet, Rule } from '../../objects.js';
import type { Verb } from '../../operations.js';
import { digestOfEncoded, digestsAsEncoded, EXPRS_DIGEST_BYTES, exprsDigestOf, writeDigest } from '../../rule-digest.js';
import { utf8Length } from '../../validate.js';
import { RULE_ATTR, UDATA } from '../attrs.js';
import { NFT_MSG, NLM_F } from '../constants.js';
import { WireKind } from '../wire-format.js';
import type { MessageWriter } from './message-writer.js';
import { writeAscii, type WireWriter } from './wire-writer.js';
import { encodeSet } from './set.js';
import { xtCompat } from './xt-compat.js';

const textEncoder = new TextEncoder();

export function encodeRule(m: MessageWriter, verb: Verb, r: Rule, echo: boolean): void {
  const msg = verb === 'delete' ? NFT_MSG.DELRULE : verb === 'destroy' ? NFT_MSG.DESTROYRULE : NFT_MSG.NEWRULE;
  if (echo && msg !== NFT_MSG.NEWRULE) throw new RangeError(`echo applies to add, insert and replace, not ${verb}`);
  // Inline anonymous sets go first, in the same batch, referenced by their transaction id.
  const exprs = msg !== NFT_MSG.NEWRULE ? [] : bindInlineSets(m, r);
  const nlFlags =
    verb === 'add' ? NLM_F.CREATE | NLM_F.APPEND : verb === 'insert' ? NLM_F.CREATE : verb === 'replace' ? NLM_F.REPLACE : 0;
  // ECHO only on the rule's own message (not on its inline sets): the addon returns its handle.
  m.begin(msg, WireKind.Rule, echo ? nlFlags | NLM_F.ECHO : nlFlags, r.family);
  const w = m.w;
  w.openList();
  w.attrStr(RULE_ATTR.TABLE, r.table);
  w.attrStr(RULE_ATTR.CHAIN, r.chain);
  if (verb !== 'add' && verb !== 'insert' && r.handle !== undefined) w.attrU64(RULE_ATTR.HANDLE, BigInt(r.handle));
  if ((verb === 'add' || verb === 'insert') && r.position !== undefined) w.attrU64(RULE_ATTR.POSITION, BigInt(r.position));
  let digestAt = -1;
  if (msg === NFT_MSG.NEWRULE) {
    digestAt = writeUdata(w, r);
    const compat = xtCompat(exprs);
    if (compat) {
      w.attrU32(RULE_ATTR.COMPAT_PROTO, compat.proto);
      w.attrU32(RULE_ATTR.COMPAT_FLAGS, compat.flags);
    }
  }
  w.closeList();
  const exprsAt = w.length;
  w.openList();
  for (const e of exprs) encodeExpr(w, e);
  w.closeList();
  if (digestAt < 0) return;
  // Most rules' bytes, as written, are what the digest covers: hashed here, not encoded again. The
  // others' bound expressions carry their inline sets with the elements digest bindInline made.
  const digest = exprs === r.exprs && digestsAsEncoded(exprs) ? digestOfEncoded(w.bytes, exprsAt, w.length) : exprsDigestOf(exprs);
  writeDigest(w.bytes, digestAt, digest);
}

/** The rule's expressions, each inline set first encoded and then referred to by its id. */
function bindInlineSets(m: MessageWriter, r: Rule): readonly Expr[] {
  const exprs = r.exprs;
  for (let i = 0; i < exprs.length; i++) {
    const e = exprs[i]!;
    if (e.type === 'lookup' && e.inline !== undefined) {
      // A packed array as the builder makes (see RuleBuilder.build): no second array map for V8.
      const bound: Expr[] = [];
      for (let j = 0; j < exprs.length; j++) bound.push(bindInline(m, exprs[j]!, r, j));
      return bound;
    }
  }
  return exprs;
}

function bindInline(m: MessageWriter, e: Expr, r: Rule, exprIndex: number): Expr {
  if (e.type !== 'lookup' || !e.inline) return e;
  checkWritable(e.inline, r.chain);
  // The digest that lets a dump leave these elements out (inline-set.ts).
  const s: NftSet = { ...e.inline, family: r.family, table: r.table, anonymous: true, elementsDigest: elementsDigestOf(e.inline) };
  if (!s.name || s.name.includes('%d')) s.name = m.anonymousSetName();
  m.inlineExpr = exprIndex;
  try {
    const id = encodeSet(m, 'add', s);
    return { ...e, set: s.name, setId: id, inline: s };
  } finally {
    m.inlineExpr = undefined;
  }
}

/** The rule's userdata: its comment, its tag, then room for the digest; returns where the digest goes. */
function writeUdata(w: WireWriter, r: Rule): number {
  const comment = r.comment === undefined ? -1 : utf8Length(r.comment);
  const tag = r.tag === undefined ? -1 : utf8Length(r.tag);
  // TLVs of u8 type, u8 length, value; text NUL-terminated, as libnftnl's nftnl_udata_put_strz.
  const len = (comment >= 0 ? comment + 3 : 0) + (tag >= 0 ? tag + 3 : 0) + 2 + EXPRS_DIGEST_BYTES;
  let at = w.attrInPlace(RULE_ATTR.USERDATA, len);
  const b = w.bytes;
  const strz = (type: number, s: string, n: number): void => {
    b[at++] = type;
    b[at++] = n + 1;
    if (writeAscii(s, b, at) < s.length) textEncoder.encodeInto(s, b.subarray(at, at + n));
    at += n;
    b[at++] = 0;
  };
  if (comment >= 0) strz(UDATA.RULE_COMMENT, r.comment!, comment);
  if (tag >= 0) strz(UDATA.RULE_TAG, r.tag!, tag);
  b[at++] = UDATA.RULE_EXPRS_DIGEST;
  b[at++] = EXPRS_DIGEST_BYTES;
  return at;
}
