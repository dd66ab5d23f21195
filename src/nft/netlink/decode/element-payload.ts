// What an element carries besides its key: a map's value or verdict, its timeout and expiry, its
// comment (the element's userdata).

import type { NftSet, SetElement } from '../../objects.js';
import { verdictFromCode } from '../../types/verdict.js';
import { decodeValues } from '../../values.js';
import { ELEM_ATTR, UDATA } from '../attrs.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes, getStr, getU32, getU64Number } from './attr-values.js';
import type { WireElement } from './wire-objects.js';

export function elementPayload(s: NftSet, e: WireElement, out: SetElement): void {
  if (s.data === 'verdict') {
    const code = getU32(e.attrs, ELEM_ATTR.VERDICT);
    if (code !== undefined) out.value = verdictFromCode(code, getStr(e.attrs, ELEM_ATTR.CHAIN));
  } else if (s.data) {
    const data = getBytes(e.attrs, ELEM_ATTR.DATA);
    if (data) out.value = decodeValues(s.data, data);
  }
  const timeout = getU64Number(e.attrs, ELEM_ATTR.TIMEOUT);
  if (timeout !== undefined) out.timeout = timeout;
  const expires = getU64Number(e.attrs, ELEM_ATTR.EXPIRATION);
  if (expires !== undefined) out.expires = expires;
  const udata = getBytes(e.attrs, ELEM_ATTR.USERDATA);
  if (udata) {
    const comment = udataString(parseUdata(udata).get(UDATA.SET_ELEM_COMMENT));
    if (comment !== undefined) out.comment = comment;
  }
}
