// Errors that name the object and the kernel's reason.

import { ERRNO_NAME } from './netlink/constants.js';
import type { Operation } from './operations.js';
import type { MissingObject, RefusalExplanation, RefusedObject } from './refusal-reason.js';

const ERRNO_TEXT: Record<number, string> = {
  1: 'Operation not permitted',
  2: 'No such file or directory',
  7: 'Argument list too long',
  12: 'Cannot allocate memory',
  16: 'Device or resource busy',
  17: 'File exists',
  19: 'No such device',
  22: 'Invalid argument',
  23: 'Too many open files in system',
  28: 'No space left on device',
  31: 'Too many links',
  34: 'Numerical result out of range',
  40: 'Too many levels of symbolic links',
  61: 'No data available',
  85: 'Interrupted system call should be restarted',
  90: 'Message too long',
  93: 'Protocol not supported',
  95: 'Operation not supported',
  105: 'No buffer space available',
};

export function errnoText(errno: number): string {
  return `${ERRNO_TEXT[errno] ?? `errno ${errno}`} (${ERRNO_NAME[errno] ?? errno})`;
}

/**
 * Raised when an operation cannot be queued: bad shapes, names, values, references. Nothing was
 * sent, and the transaction is as it was before the call. `operation` is the operation as the
 * caller gave it (its verb, kind and object); undefined only when the argument was none of
 * { table }, { chain }, { rule }, { set } or { set, elements }.
 */
export class NftValidationError extends Error {
  constructor(
    message: string,
    readonly operation: Operation | undefined,
    readonly operationIndex: number,
  ) {
    super(message);
    this.name = 'NftValidationError';
  }
}

export interface KernelRefusal {
  errno: number;
  /** The kernel's extended-ack text, '' when it gave none. */
  kernelMessage: string;
  /** Index of the caller's operation (-1: the batch as a whole). */
  operationIndex: number;
  operation?: Operation;
  /** The failing operation as an nft command. */
  command?: string;
  /** Index of the element within the operation, for element operations. */
  elementIndex?: number;
  /** What the refusal means for this operation, where errno and strerror say too little (refusal-reason.ts). */
  reason?: string;
  /** For ENOENT, where the kernel said which: the object that does not exist. */
  missing?: MissingObject;
  /** For ENFILE on an element: the set that is full, with its declared size. */
  full?: RefusalExplanation['full'];
  /** For EBUSY on a delete: the set or chain something still refers to. */
  inUse?: RefusedObject;
  /** For EEXIST on a map element: the map that has the key with other data. */
  conflict?: RefusedObject;
}

/**
 * Raised when the kernel refused a transaction. Nothing of it was applied: nf_tables aborts the
 * whole batch. `refusals` lists every error the kernel reported; the first is the message's subject.
 */
export class NftCommitError extends Error implements KernelRefusal {
  readonly errno: number;
  readonly code: string;
  readonly kernelMessage: string;
  readonly operationIndex: number;
  readonly operation?: Operation;
  readonly command?: string;
  readonly elementIndex?: number;
  readonly reason?: string;
  readonly missing?: MissingObject;
  readonly full?: RefusalExplanation['full'];
  readonly inUse?: RefusedObject;
  readonly conflict?: RefusedObject;

  constructor(readonly refusals: KernelRefusal[]) {
    const first = refusals[0]!;
    const where =
      first.operationIndex < 0
        ? 'the batch'
        : `operation ${first.operationIndex}${first.command ? ` (${truncate(first.command)})` : ''}${first.elementIndex !== undefined && first.elementIndex >= 0 ? `, element ${first.elementIndex}` : ''}`;
    const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more error(s))` : '';
    const why = first.reason ? `${first.reason} (${ERRNO_NAME[first.errno] ?? first.errno})` : errnoText(first.errno);
    super(`nftlink: kernel refused ${where}: ${why}${first.kernelMessage ? `: ${first.kernelMessage}` : ''}${more}`);
    this.name = 'NftCommitError';
    this.errno = first.errno;
    this.code = ERRNO_NAME[first.errno] ?? String(first.errno);
    this.kernelMessage = first.kernelMessage;
    this.operationIndex = first.operationIndex;
    if (first.operation) this.operation = first.operation;
    if (first.command) this.command = first.command;
    if (first.elementIndex !== undefined) this.elementIndex = first.elementIndex;
    if (first.reason) this.reason = first.reason;
    if (first.missing) this.missing = first.missing;
    if (first.full) this.full = first.full;
    if (first.inUse) this.inUse = first.inUse;
    if (first.conflict) this.conflict = first.conflict;
  }
}

/** The ruleset changed since the generation the transaction was computed against (ERESTART). */
export class NftGenerationError extends NftCommitError {
  constructor(refusals: KernelRefusal[], readonly expectedGeneration: number) {
    super(refusals);
    this.name = 'NftGenerationError';
    this.message = `nftlink: the ruleset changed since generation ${expectedGeneration}; nothing was applied`;
  }
}

function truncate(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}...` : s;
}

/**
 * An error with the errno the system gave, as Node's own system errors have it: `code` ('EPERM'
 * when the process lacks CAP_NET_ADMIN in the namespace, 'ENOENT' for a missing namespace...) and
 * `errno`. The addon states the errno in its messages ("... (errno 1)"); this reads it from there.
 */
export interface NftSystemError extends Error {
  code: string;
  errno: number;
}

const ERRNO_IN_MESSAGE = /\(errno (\d+)\)/;

/** Gives an error from the addon the `code` and `errno` its message states; other values pass through. */
export function withErrnoCode(err: unknown): unknown {
  if (!(err instanceof Error) || (err as Partial<NftSystemError>).code !== undefined) return err;
  const m = ERRNO_IN_MESSAGE.exec(err.message);
  if (!m) return err;
  const errno = Number(m[1]);
  Object.assign(err, { code: ERRNO_NAME[errno] ?? `ERRNO${errno}`, errno });
  return err;
}

/**
 * The addon's functions with withErrnoCode applied to what they throw or reject with. Everything
 * a connection asks of the kernel goes through the binding, so this is the one place to do it.
 */
export function withErrnoCodes<T extends object>(binding: T): T {
  // By function, not by name: a function replaced on the binding (tests do) gets its own wrapper.
  const wrapped = new WeakMap<object, unknown>();
  return new Proxy(binding, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      let fn = wrapped.get(value);
      if (fn === undefined) {
        fn = function (...args: unknown[]): unknown {
          let out: unknown;
          try {
            out = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (err) {
            throw withErrnoCode(err);
          }
          if (out instanceof Promise) return out.catch((err: unknown) => Promise.reject(withErrnoCode(err)));
          return out;
        };
        wrapped.set(value, fn);
      }
      return fn;
    },
  });
}
