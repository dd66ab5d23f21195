import { getU32 } from '../netlink/decode/attr-values.js';
import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';
import { required, type ExprCodec } from './codec.js';

/**
 * nft_hash: `jhash <key> mod N [seed S] [offset K]` hashes the `len` bytes loaded from `sreg`;
 * `symhash mod N [offset K]` hashes the flow symmetrically (no source register). The result, in
 * [offset, offset + modulus), goes to `dreg` (host order, 4 bytes).
 */
export type HashExpr =
  | { type: 'hash'; mode: 'jhash'; sreg: number; len: number; modulus: number; seed?: number; offset?: number; dreg: number }
  | { type: 'hash'; mode: 'symhash'; modulus: number; offset?: number; dreg: number };

// libnftnl's NFTNL_EXPR_HASH_* ids; the kernel's hash types (enum nft_hash_types).
const A = { SREG: 1, DREG: 2, LEN: 3, MODULUS: 4, SEED: 5, OFFSET: 6, TYPE: 7 } as const;
const NFT_HASH = { jhash: 0, symhash: 1 } as const;

export const hashCodec: ExprCodec<HashExpr> = {
  type: 'hash',
  name: 'hash',
  encodeAttrs(w: WireWriter, e: HashExpr): void {
    if (e.mode === 'jhash') {
      w.attrU32(A.SREG, e.sreg);
      w.attrU32(A.LEN, e.len);
    }
    w.attrU32(A.DREG, e.dreg);
    w.attrU32(A.MODULUS, e.modulus);
    if (e.mode === 'jhash' && e.seed !== undefined) w.attrU32(A.SEED, e.seed);
    if (e.offset) w.attrU32(A.OFFSET, e.offset);
    w.attrU32(A.TYPE, NFT_HASH[e.mode]);
  },
  decode(x: WireExpr): HashExpr {
    const type = getU32(x.attrs, A.TYPE) ?? NFT_HASH.jhash;
    const modulus = required(getU32(x.attrs, A.MODULUS), 'hash', 'modulus');
    const dreg = required(getU32(x.attrs, A.DREG), 'hash', 'dreg');
    const offset = getU32(x.attrs, A.OFFSET);
    let e: HashExpr;
    if (type === NFT_HASH.symhash) e = { type: 'hash', mode: 'symhash', modulus, dreg };
    else if (type === NFT_HASH.jhash) {
      e = { type: 'hash', mode: 'jhash', sreg: required(getU32(x.attrs, A.SREG), 'hash', 'sreg'), len: required(getU32(x.attrs, A.LEN), 'hash', 'len'), modulus, dreg };
      const seed = getU32(x.attrs, A.SEED);
      if (seed !== undefined) e.seed = seed;
    } else throw new Error(`nftlink: hash type ${type} is not supported`);
    if (offset) e.offset = offset;
    return e;
  },
};
