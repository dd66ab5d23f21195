// A validation refusal: queuing `obj` throws NftValidationError and leaves the transaction as it was.

import { expect } from 'vitest';
import { NftValidationError, type Transaction } from '../../src/index.js';

export function refusalOf(tx: Transaction, obj: unknown): NftValidationError {
  const before = tx.operations.length;
  try {
    tx.add(obj as never);
  } catch (err) {
    expect(err).toBeInstanceOf(NftValidationError);
    expect(tx.operations).toHaveLength(before);
    return err as NftValidationError;
  }
  throw new Error(`accepted: ${JSON.stringify(obj)}`);
}
