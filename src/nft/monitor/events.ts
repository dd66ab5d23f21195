// What a monitor yields (Nftables.monitor, FakeNftables.monitor): the ruleset's changes, one
// committed transaction at a time, and the explicit mark of events the monitor could not keep.

import type { Chain, Family, NftSet, Rule, SetElement, Table } from '../objects.js';

/**
 * One change the kernel announced, shaped as the Operation that makes it (renderOperation prints it
 * as an nft command). Rules: `add` appends (the kernel's NLM_F_APPEND), `insert` does not; a
 * replaced rule comes as its delete and the add of the new one (which keeps its handle).
 * Elements: of named sets only (an anonymous set travels inside the rule that uses it, as its
 * lookup's `inline` set).
 */
export type MonitorChange =
  | { verb: 'add' | 'delete'; kind: 'table'; table: Table }
  | { verb: 'add' | 'delete'; kind: 'chain'; chain: Chain }
  | { verb: 'add' | 'insert' | 'delete'; kind: 'rule'; rule: Rule }
  | { verb: 'add' | 'delete'; kind: 'set'; set: NftSet }
  | {
      verb: 'add' | 'delete';
      kind: 'element';
      set: NftSet;
      elements: readonly SetElement[];
      /**
       * Elements that could not be decoded because the set's types were unknown (a set the monitor
       * never saw: created before it started and gone before its first dump); 0 normally.
       */
      undecoded?: number;
    };

export type MonitorKind = MonitorChange['kind'];

/** One committed transaction (the kernel's NFT_MSG_NEWGEN closes it): its changes, in kernel order. */
export interface MonitorTransaction {
  type: 'transaction';
  /** The ruleset generation the transaction made. */
  generation: number;
  /** The committing thread's id (NFTA_GEN_PROC_PID, Linux 4.16+; the kernel's task_pid_nr). */
  pid?: number;
  /** Its name (NFTA_GEN_PROC_NAME): `nft`, `node`, a libuv worker's name ... */
  processName?: string;
  /** The netlink port id of the socket that committed it (0: the kernel itself). */
  portid: number;
  /** Committed through the connection the monitor was opened from (its port id is `portid`). */
  self: boolean;
  /** The changes that pass the monitor's filters; never empty unless `emptyTransactions`. */
  changes: MonitorChange[];
}

/**
 * Events were lost: the kernel's receive queue overflowed (ENOBUFS) while the consumer was slow
 * (or the burst was larger than the socket buffer). What happened meanwhile is unknown, and the
 * transaction being received when it happened is dropped: dump the ruleset again to resync.
 */
export interface MonitorLost {
  type: 'lost';
}

export type MonitorEvent = MonitorTransaction | MonitorLost;

export interface MonitorOptions {
  /** Only objects of this family. */
  family?: Family;
  /** Only objects of tables of this name (with `family`: of that one table). */
  table?: string;
  /** Only these kinds of change (default: all). */
  kinds?: readonly MonitorKind[];
  /** Also yield transactions none of whose changes pass the filters (only their generation). */
  emptyTransactions?: boolean;
  /**
   * How many changes may wait for the consumer before the monitor stops reading the socket (the
   * kernel then queues events in the socket buffer, and drops them once that is full: `lost`).
   * Default 65536.
   */
  maxBuffered?: number;
  /**
   * SO_RCVBUF in bytes (the kernel doubles it for its bookkeeping). Default 8 MiB: a burst of
   * about 100,000 element changes fits while the consumer catches up.
   */
  receiveBuffer?: number;
  /**
   * Leave out the changes of this connection's own commits (their transaction still closes, with no
   * changes: yielded only with `emptyTransactions`). For a process that watches for others' changes
   * to tables it writes itself: its own are not even decoded.
   */
  skipOwnChanges?: boolean;
}
