// A named stateful object's message: NEWOBJ with the attributes of its type, DELOBJ or
// DESTROYOBJ by type and name (or handle). The kernel finds objects by type and name, so a delete
// carries the type too.

import { CT_L3PROTOS, CT_L4PROTOS, CT_TIMEOUT_DEFAULTS, CT_TIMEOUT_STATES, LIMIT_PERIODS, NFT_OBJECT, OBJECT_TYPES, type NftObject, type NftObjectRef } from '../../named-objects.js';
import type { Verb } from '../../operations.js';
import { checkInteger, checkOneOf, codeOf } from '../../validate.js';
import { OBJ_ATTR, OBJ_TYPED_ATTR } from '../attrs.js';
import { NFT_LIMIT, NFT_LIMIT_F_INV, NFT_MSG, NFT_QUOTA_F_INV, SYNPROXY_OPT } from '../constants.js';
import { commentUdata } from '../udata.js';
import { WireKind } from '../wire-format.js';
import type { WireWriter } from './wire-writer.js';
import { createFlags, noExprs, type MessageWriter } from './message-writer.js';

/** libnftnl's fixed ct timeout array: NFTNL_CTTIMEOUT_ARRAY_MAX (the TCP states) u32s. */
const CT_TIMEOUT_ARRAY_LEN = CT_TIMEOUT_STATES.tcp.length;
/** NFT_CT_HELPER_NAME_LEN less its NUL. */
const CT_HELPER_NAME_MAX = 15;

const U64_MAX = 2n ** 64n - 1n;

export function encodeObject(m: MessageWriter, verb: Verb, o: NftObject | NftObjectRef): void {
  if (verb !== 'add' && verb !== 'create' && verb !== 'delete' && verb !== 'destroy') throw new RangeError(`${verb} does not apply to named objects`);
  checkOneOf(o.type, OBJECT_TYPES, `object ${o.name} type`);
  const msg = verb === 'delete' ? NFT_MSG.DELOBJ : verb === 'destroy' ? NFT_MSG.DESTROYOBJ : NFT_MSG.NEWOBJ;
  m.begin(msg, WireKind.Object, createFlags(verb), o.family);
  const w = m.w;
  w.openList();
  w.attrStr(OBJ_ATTR.TABLE, o.table);
  w.attrStr(OBJ_ATTR.NAME, o.name);
  w.attrU32(OBJ_ATTR.TYPE, NFT_OBJECT[o.type]);
  if (msg === NFT_MSG.NEWOBJ) {
    const full = o as NftObject;
    writeTyped(w, full);
    const ud = commentUdata(full.comment);
    if (ud) w.attrBytes(OBJ_ATTR.USERDATA, ud);
  } else if (o.handle !== undefined) w.attrU64(OBJ_ATTR.HANDLE, BigInt(o.handle));
  w.closeList();
  noExprs(w);
}

const at = (offset: number): number => OBJ_ATTR.BASE + offset;

function u64(v: unknown, what: string): bigint {
  if (typeof v === 'bigint' && v >= 0n && v <= U64_MAX) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  throw new RangeError(`${what} ${typeof v === 'string' ? `"${v}"` : String(v)} is not a whole number from 0 to 2^64-1`);
}

function l3protoOf(o: { family: string; l3proto?: string }, what: string): number {
  if (o.l3proto !== undefined) return codeOf(CT_L3PROTOS, o.l3proto, `${what} l3proto`);
  // nft's default: the table's family; a bridge, netdev or arp table has to say.
  const code = (CT_L3PROTOS as Record<string, number>)[o.family];
  if (code === undefined) throw new RangeError(`${what} in a ${o.family} table needs its l3proto (ip, ip6 or inet)`);
  return code;
}

function writeTyped(w: WireWriter, o: NftObject): void {
  const what = `${o.type} ${o.name}`;
  switch (o.type) {
    case 'counter': {
      const A = OBJ_TYPED_ATTR.counter;
      if (o.packets !== undefined) w.attrU64(at(A.PACKETS), u64(o.packets, `${what} packets`));
      if (o.bytes !== undefined) w.attrU64(at(A.BYTES), u64(o.bytes, `${what} bytes`));
      return;
    }
    case 'quota': {
      const A = OBJ_TYPED_ATTR.quota;
      w.attrU64(at(A.BYTES), u64(o.bytes, `${what} bytes`));
      if (o.used !== undefined) w.attrU64(at(A.CONSUMED), u64(o.used, `${what} used`));
      w.attrU32(at(A.FLAGS), o.over ? NFT_QUOTA_F_INV : 0);
      return;
    }
    case 'limit': {
      const A = OBJ_TYPED_ATTR.limit;
      w.attrU64(at(A.RATE), u64(o.rate, `${what} rate`));
      w.attrU64(at(A.UNIT), BigInt(codeOf(LIMIT_PERIODS, o.per, `${what} per`)));
      if (o.burst !== undefined) checkInteger(o.burst, 0, 2 ** 32 - 1, `${what} burst`);
      w.attrU32(at(A.BURST), o.burst ?? 0);
      if (o.unit !== undefined) checkOneOf(o.unit, ['packets', 'bytes'], `${what} unit`);
      w.attrU32(at(A.TYPE), o.unit === 'bytes' ? NFT_LIMIT.pkt_bytes : NFT_LIMIT.pkts);
      w.attrU32(at(A.FLAGS), o.over ? NFT_LIMIT_F_INV : 0);
      return;
    }
    case 'ct helper': {
      const A = OBJ_TYPED_ATTR.ctHelper;
      if (typeof o.helper !== 'string' || o.helper.length === 0 || Buffer.byteLength(o.helper) > CT_HELPER_NAME_MAX) {
        throw new RangeError(`${what} helper ${JSON.stringify(o.helper)} is not a helper name of 1 to ${CT_HELPER_NAME_MAX} bytes`);
      }
      w.attrStr(at(A.NAME), o.helper);
      w.attrU16(at(A.L3PROTO), l3protoOf(o, what));
      w.attrU8(at(A.L4PROTO), codeOf(CT_L4PROTOS, o.protocol, `${what} protocol`));
      return;
    }
    case 'ct timeout': {
      const A = OBJ_TYPED_ATTR.ctTimeout;
      const states = CT_TIMEOUT_STATES[o.protocol];
      if (!states) throw new RangeError(`${what} protocol ${JSON.stringify(o.protocol)} is not one of: ${Object.keys(CT_TIMEOUT_STATES).join(', ')}`);
      w.attrU16(at(A.L3PROTO), l3protoOf(o, what));
      w.attrU8(at(A.L4PROTO), CT_L4PROTOS[o.protocol]);
      // libnftnl sends every state of the protocol and the kernel takes each as given, 0 too: the
      // states not given get their defaults, as nft fills them in.
      const array = new Uint8Array(4 * CT_TIMEOUT_ARRAY_LEN);
      const view = new DataView(array.buffer);
      CT_TIMEOUT_DEFAULTS[o.protocol].forEach((seconds, i) => view.setUint32(4 * i, seconds, true));
      if (o.policy === null || typeof o.policy !== 'object') throw new RangeError(`${what} policy must be an object of seconds per state`);
      for (const [state, seconds] of Object.entries(o.policy)) {
        const i = (states as readonly string[]).indexOf(state);
        if (i < 0) throw new RangeError(`${what} policy state ${JSON.stringify(state)} is not one of: ${states.join(', ')}`);
        checkInteger(seconds, 1, 2 ** 32 - 1, `${what} policy ${state}`);
        view.setUint32(4 * i, seconds, true);
      }
      w.attrBytes(at(A.ARRAY), array);
      return;
    }
    case 'ct expectation': {
      const A = OBJ_TYPED_ATTR.ctExpect;
      w.attrU16(at(A.L3PROTO), l3protoOf(o, what));
      w.attrU8(at(A.L4PROTO), codeOf(CT_L4PROTOS, o.protocol, `${what} protocol`));
      checkInteger(o.dport, 0, 65535, `${what} dport`);
      w.attrU16(at(A.DPORT), o.dport);
      checkInteger(o.timeout, 0, 2 ** 32 - 1, `${what} timeout`);
      w.attrU32(at(A.TIMEOUT), o.timeout);
      checkInteger(o.size, 0, 255, `${what} size`);
      w.attrU8(at(A.SIZE), o.size);
      return;
    }
    case 'synproxy': {
      const A = OBJ_TYPED_ATTR.synproxy;
      checkInteger(o.mss, 0, 65535, `${what} mss`);
      checkInteger(o.wscale, 0, 14, `${what} wscale`);
      w.attrU16(at(A.MSS), o.mss);
      w.attrU8(at(A.WSCALE), o.wscale);
      // nft always sets the mss and wscale options, and the others when asked.
      const flags = SYNPROXY_OPT.mss | SYNPROXY_OPT.wscale | (o.timestamp ? SYNPROXY_OPT.timestamp : 0) | (o.sackPerm ? SYNPROXY_OPT.sackPerm : 0);
      w.attrU32(at(A.FLAGS), flags);
      return;
    }
    case 'secmark': {
      if (typeof o.context !== 'string' || o.context.length === 0) throw new RangeError(`${what} context must be a non-empty string`);
      w.attrStr(at(OBJ_TYPED_ATTR.secmark.CTX), o.context);
      return;
    }
  }
}
