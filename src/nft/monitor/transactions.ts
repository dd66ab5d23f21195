// Changes -> transactions: the kernel announces a commit's changes one by one and then its new
// generation (NFT_MSG_NEWGEN, with the committer's port id and process); the monitor yields them as
// one MonitorTransaction. Commits are announced one after another (under the kernel's commit
// mutex), so the changes before a generation mark are all of that generation's transaction.

import type { MonitorChange, MonitorEvent, MonitorLost, MonitorTransaction } from './events.js';
import type { MonitorRecord } from './event-decoder.js';

export class TransactionAssembler {
  private pending: MonitorChange[] = [];

  /**
   * `selfPortid`: the port id of the connection the monitor belongs to (its commits are `self`);
   * `emptyTransactions`: yield transactions with no change that passed the filters too;
   * `skipOwnChanges`: the monitor's own commits come with no changes (the addon lets only their
   * sets' declarations through, for the decoder: dropped here).
   */
  constructor(
    private readonly selfPortid: number | undefined,
    private readonly emptyTransactions = false,
    private readonly skipOwnChanges = false,
  ) {}

  /** Returns the transaction a generation mark closes, if it is to be yielded. */
  record(r: MonitorRecord): MonitorTransaction | undefined {
    if (r.type === 'change') {
      this.pending.push(r.change);
      return undefined;
    }
    const self = r.portid !== 0 && r.portid === this.selfPortid;
    const changes = self && this.skipOwnChanges ? [] : this.pending;
    this.pending = [];
    if (changes.length === 0 && !this.emptyTransactions) return undefined;
    const t: MonitorTransaction = { type: 'transaction', generation: r.generation, portid: r.portid, self, changes };
    if (r.pid !== undefined) t.pid = r.pid;
    if (r.processName !== undefined) t.processName = r.processName;
    return t;
  }

  /** Events were lost: the transaction being received is incomplete and dropped. */
  lost(): MonitorLost {
    this.pending = [];
    return { type: 'lost' };
  }
}

/** What an event weighs in the monitor's buffer: its changes, an element change by its elements. */
export function eventWeight(ev: MonitorEvent): number {
  if (ev.type === 'lost') return 1;
  let n = 0;
  for (const c of ev.changes) n += c.kind === 'element' ? Math.max(1, c.elements.length) : 1;
  return Math.max(1, n);
}
