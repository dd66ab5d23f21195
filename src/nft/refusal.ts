// A refusal tied back to the caller's transaction, and the error a refused commit throws. Shared by
// the two connections: Nftables (client.ts) builds its refusals from what the addon reports,
// FakeNftables (src/testing) from what its in-memory ruleset refused, so both throw the same errors.

import { ERRNO } from './netlink/constants.js';
import type { WireKind } from './netlink/wire-format.js';
import { NftCommitError, NftGenerationError, type KernelRefusal } from './errors.js';
import { refusalReason } from './refusal-reason.js';
import type { CommitResult } from './connection.js';
import type { Transaction } from './transaction.js';

/** One refused message, already tied to the caller's operation (see RefusalSite). */
export interface OperationFault {
  errno: number;
  /** The kernel's extended-ack text, '' when it gave none. */
  kernelMessage: string;
  operationIndex: number;
  messageKind: WireKind | undefined;
  attrPath: readonly number[];
  /** The caller's element index, for element messages. */
  elementIndex?: number | undefined;
  /** For a message of a rule's inline set: the index of the rule's expression that holds the set. */
  inlineExpr?: number | undefined;
}

/** The refusal of one operation: its errno, the operation, its nft text and what the refusal means. */
export function operationRefusal(tx: Transaction, fault: OperationFault): KernelRefusal {
  const op = fault.operationIndex;
  const r: KernelRefusal = {
    errno: fault.errno,
    kernelMessage: fault.kernelMessage,
    operationIndex: op,
    operation: tx.operation(op),
  };
  if (fault.elementIndex !== undefined) r.elementIndex = fault.elementIndex;
  const explained = refusalReason({
    errno: fault.errno,
    op: r.operation,
    messageKind: fault.messageKind,
    attrPath: fault.attrPath,
    elementIndex: r.elementIndex,
    inlineExpr: fault.inlineExpr,
  });
  // Its reason and whichever object it names (missing, full, inUse, conflict): KernelRefusal's fields.
  if (explained) Object.assign(r, explained);
  try {
    r.command = tx.renderOperation(op, r.elementIndex);
  } catch {
    // An operation that has no nft text (an expression the renderer does not know) still has its index.
  }
  return r;
}

/**
 * The error of a refused commit: NftGenerationError when the batch as a whole was refused with
 * ERESTART under a `generation` (the ruleset moved on), NftCommitError otherwise.
 */
export function commitFailure(refusals: KernelRefusal[], generation: number | undefined): NftCommitError {
  const sorted = [...refusals].sort((a, b) => a.operationIndex - b.operationIndex);
  if (generation !== undefined && sorted.some((r) => r.errno === ERRNO.ERESTART && r.operationIndex < 0)) {
    return new NftGenerationError(sorted, generation);
  }
  return new NftCommitError(sorted);
}

/** The CommitResult of a committed transaction, from the rule handles echoed by operation index. */
export function commitResult(tx: Transaction, ruleHandles: Map<number, number>): CommitResult {
  const missingHandles: number[] = [];
  for (const i of tx.echoedRules) if (!ruleHandles.has(i)) missingHandles.push(i);
  return { ruleHandles, missingHandles };
}
