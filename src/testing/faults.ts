// What the fake refuses, as the kernel reports it: an errno, the kind of message refused and the
// attribute the kernel points at (NLMSGERR_ATTR_OFFS), so that the library's own explanation of
// kernel refusals (refusal-reason.ts) reads the fake's refusals as it reads the kernel's.

import { ERRNO } from '../nft/netlink/constants.js';
import { WireKind } from '../nft/netlink/wire-format.js';
import { KIND_OF_OPERATION, NFTA } from '../nft/refusal-reason.js';
import type { Operation } from '../nft/index.js';

/** One refused message of an operation (the operation's index is added by the caller). */
export interface Fault {
  errno: number;
  messageKind: WireKind;
  attrPath: number[];
  elementIndex?: number;
  inlineExpr?: number;
}

export const fault = (errno: number, messageKind: WireKind, attrPath: number[] = [], more: Partial<Fault> = {}): Fault => ({ errno, messageKind, attrPath, ...more });

/** ENOENT, pointing at attribute `attr` of a message of `kind`. */
export const missingAt = (kind: WireKind, attr: number): Fault => fault(ERRNO.ENOENT, kind, [attr]);

/** A fault on element `index` of an element message. */
export const elementFault = (errno: number, index: number): Fault => fault(errno, WireKind.Elements, [NFTA.SET_ELEM_LIST_ELEMENTS, 0], { elementIndex: index });

/** A fault on expression `index` of a rule message. */
export const exprFault = (errno: number, index: number): Fault => fault(errno, WireKind.Rule, [NFTA.RULE_EXPRESSIONS, 0, NFTA.LIST_ELEM, index]);

/** A refusal a test asked for (FakeNftables.refuse): the operation's own message, no attribute. */
export function injectedFault(op: Operation, errno: number, elementIndex: number | undefined): Fault {
  const f = fault(errno, KIND_OF_OPERATION[op.kind]);
  if (op.kind === 'element' && elementIndex !== undefined) f.elementIndex = elementIndex;
  return f;
}
