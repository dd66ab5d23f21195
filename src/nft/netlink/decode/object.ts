// A dumped named object -> NftObject, by its type's attributes (see encode/object.ts). An object
// of a type nftlink does not model (connlimit, tunnel) is skipped by the caller (undefined here).

import { CT_L3PROTOS, CT_L4PROTOS, CT_TIMEOUT_DEFAULTS, CT_TIMEOUT_STATES, LIMIT_PERIODS, NFT_OBJECT, type CtL3proto, type CtL4proto, type LimitPeriod, type NftObject, type NftObjectType } from '../../named-objects.js';
import { OBJ_ATTR, OBJ_TYPED_ATTR, UDATA } from '../attrs.js';
import { NFT_LIMIT, NFT_LIMIT_F_INV, NFT_QUOTA_F_INV, SYNPROXY_OPT } from '../constants.js';
import { parseUdata, udataString } from '../udata.js';
import { getBytes, getStr, getU16, getU32, getU64, getU64Number, getU8 } from './attr-values.js';
import { familyOf } from './family.js';
import type { WireObject } from './wire-objects.js';

const TYPE_BY_NUMBER = new Map(Object.entries(NFT_OBJECT).map(([k, v]) => [v, k as NftObjectType]));
const byValue = <K extends string>(table: Readonly<Record<K, number>>, v: number | undefined): K | undefined =>
  v === undefined ? undefined : (Object.keys(table) as K[]).find((k) => table[k] === v);
const at = (offset: number): number => OBJ_ATTR.BASE + offset;

export function decodeObject(o: WireObject): NftObject | undefined {
  const type = TYPE_BY_NUMBER.get(getU32(o.attrs, OBJ_ATTR.TYPE) ?? 0);
  if (type === undefined) return undefined;
  const base = { family: familyOf(o), table: getStr(o.attrs, OBJ_ATTR.TABLE) ?? '', name: getStr(o.attrs, OBJ_ATTR.NAME) ?? '' };
  const obj = typed(o, type, base);
  if (obj === undefined) return undefined;
  const comment = udataString(parseUdata(getBytes(o.attrs, OBJ_ATTR.USERDATA)).get(UDATA.TABLE_COMMENT));
  if (comment !== undefined) obj.comment = comment;
  const handle = getU64Number(o.attrs, OBJ_ATTR.HANDLE);
  if (handle !== undefined) obj.handle = handle;
  return obj;
}

type Base = Pick<NftObject, 'family' | 'table' | 'name'>;

function typed(o: WireObject, type: NftObjectType, base: Base): NftObject | undefined {
  const a = o.attrs;
  switch (type) {
    case 'counter': {
      const A = OBJ_TYPED_ATTR.counter;
      return { ...base, type, packets: getU64(a, at(A.PACKETS)) ?? 0n, bytes: getU64(a, at(A.BYTES)) ?? 0n };
    }
    case 'quota': {
      const A = OBJ_TYPED_ATTR.quota;
      const q: NftObject = { ...base, type, bytes: getU64(a, at(A.BYTES)) ?? 0n };
      const used = getU64(a, at(A.CONSUMED));
      if (used) q.used = used;
      if ((getU32(a, at(A.FLAGS)) ?? 0) & NFT_QUOTA_F_INV) q.over = true;
      return q;
    }
    case 'limit': {
      const A = OBJ_TYPED_ATTR.limit;
      const per = byValue(LIMIT_PERIODS, getU64Number(a, at(A.UNIT))) ?? ('second' as LimitPeriod);
      const l: NftObject = { ...base, type, rate: getU64Number(a, at(A.RATE)) ?? 0, per };
      const burst = getU32(a, at(A.BURST));
      if (burst) l.burst = burst;
      if (getU32(a, at(A.TYPE)) === NFT_LIMIT.pkt_bytes) l.unit = 'bytes';
      if ((getU32(a, at(A.FLAGS)) ?? 0) & NFT_LIMIT_F_INV) l.over = true;
      return l;
    }
    case 'ct helper': {
      const A = OBJ_TYPED_ATTR.ctHelper;
      return { ...base, type, helper: getStr(a, at(A.NAME)) ?? '', protocol: l4(getU8(a, at(A.L4PROTO))), ...l3(getU16(a, at(A.L3PROTO))) };
    }
    case 'ct timeout': {
      const A = OBJ_TYPED_ATTR.ctTimeout;
      const protocol = byValue(CT_L4PROTOS, getU8(a, at(A.L4PROTO)));
      if (protocol !== 'tcp' && protocol !== 'udp') return undefined;
      const policy: Record<string, number> = {};
      const array = getBytes(a, at(A.ARRAY));
      if (array) {
        const view = new DataView(array.buffer, array.byteOffset, array.byteLength);
        CT_TIMEOUT_STATES[protocol].forEach((state, i) => {
          if (4 * i + 4 > array.length) return;
          const seconds = view.getUint32(4 * i, true);
          if (seconds !== 0 && seconds !== CT_TIMEOUT_DEFAULTS[protocol][i]) policy[state] = seconds;
        });
      }
      return { ...base, type, protocol, ...l3(getU16(a, at(A.L3PROTO))), policy };
    }
    case 'ct expectation': {
      const A = OBJ_TYPED_ATTR.ctExpect;
      return {
        ...base,
        type,
        protocol: l4(getU8(a, at(A.L4PROTO))),
        ...l3(getU16(a, at(A.L3PROTO))),
        dport: getU16(a, at(A.DPORT)) ?? 0,
        timeout: getU32(a, at(A.TIMEOUT)) ?? 0,
        size: getU8(a, at(A.SIZE)) ?? 0,
      };
    }
    case 'synproxy': {
      const A = OBJ_TYPED_ATTR.synproxy;
      const flags = getU32(a, at(A.FLAGS)) ?? 0;
      const s: NftObject = { ...base, type, mss: getU16(a, at(A.MSS)) ?? 0, wscale: getU8(a, at(A.WSCALE)) ?? 0 };
      if (flags & SYNPROXY_OPT.timestamp) s.timestamp = true;
      if (flags & SYNPROXY_OPT.sackPerm) s.sackPerm = true;
      return s;
    }
    case 'secmark':
      return { ...base, type, context: getStr(a, at(OBJ_TYPED_ATTR.secmark.CTX)) ?? '' };
  }
}

function l4(n: number | undefined): CtL4proto {
  return byValue(CT_L4PROTOS, n) ?? 'tcp';
}

function l3(n: number | undefined): { l3proto?: CtL3proto } {
  const v = byValue(CT_L3PROTOS, n);
  return v === undefined ? {} : { l3proto: v };
}
