import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { codeOf } from '../validate.js';
import { namesByNumber, required, requiredName, type ExprCodec } from './codec.js';

/** Socket keys (enum nft_socket_keys): `socket transparent|mark|wildcard|cgroupv2 level N`. */
export const NFT_SOCKET = { transparent: 0, mark: 1, wildcard: 2, cgroupv2: 3 } as const;
export type SocketKey = keyof typeof NFT_SOCKET;

/** nft_socket: a property of the local socket the packet belongs to into `dreg`. */
export interface SocketExpr {
  type: 'socket';
  key: SocketKey;
  dreg: number;
  /** cgroupv2 only: the ancestor level of the cgroup compared. */
  level?: number;
}

// libnftnl's NFTNL_EXPR_SOCKET_* ids.
const A = { KEY: 1, DREG: 2, LEVEL: 3 } as const;
const KEY_BY_NUMBER = namesByNumber(NFT_SOCKET);

export const socketCodec: ExprCodec<SocketExpr> = {
  type: 'socket',
  name: 'socket',
  encodeAttrs(w: WireWriter, e: SocketExpr): void {
    w.attrU32(A.KEY, codeOf(NFT_SOCKET, e.key, 'socket key'));
    w.attrU32(A.DREG, e.dreg);
    if (e.level !== undefined) w.attrU32(A.LEVEL, e.level);
  },
  decode(x: WireExpr): SocketExpr {
    const key = requiredName(KEY_BY_NUMBER, getU32(x.attrs, A.KEY), 'socket', 'key');
    const e: SocketExpr = { type: 'socket', key, dreg: required(getU32(x.attrs, A.DREG), 'socket', 'dreg') };
    const level = getU32(x.attrs, A.LEVEL);
    if (level !== undefined) e.level = level;
    return e;
  },
};
