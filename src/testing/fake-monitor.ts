// The fake's monitors: each commit that changes the ruleset goes to every open monitor as one
// transaction (ruleset-diff.ts), filtered as the kernel's monitor filters. There is no socket to
// overrun: a monitor whose buffer is full drops the transactions that come meanwhile and yields
// `lost` before the next one, as the kernel's does after an overrun.

import { NftMonitor, type MonitorChange, type MonitorEvent, type MonitorOptions } from '../nft/index.js';
import { EventQueue } from '../nft/monitor/event-queue.js';
import { MonitorFilter } from '../nft/monitor/filter.js';
import { eventWeight } from '../nft/monitor/transactions.js';
import { DEFAULT_MAX_BUFFERED } from '../nft/monitor/kernel-monitor.js';

interface Subscriber {
  queue: EventQueue<MonitorEvent>;
  filter: MonitorFilter;
  emptyTransactions: boolean;
  /** Every commit of the fake is its own connection's (self): with skipOwnChanges, none has changes. */
  skipOwnChanges: boolean;
  full: boolean;
  lost: boolean;
}

export class FakeMonitors {
  private readonly subscribers = new Set<Subscriber>();

  constructor(readonly portid: number) {}

  open(opts: MonitorOptions = {}): NftMonitor {
    const sub: Subscriber = {
      filter: new MonitorFilter(opts),
      emptyTransactions: opts.emptyTransactions === true,
      skipOwnChanges: opts.skipOwnChanges === true,
      full: false,
      lost: false,
      queue: undefined as unknown as EventQueue<MonitorEvent>,
    };
    sub.queue = new EventQueue<MonitorEvent>(
      {
        pause: () => (sub.full = true),
        resume: () => (sub.full = false),
        close: () => this.subscribers.delete(sub),
      },
      opts.maxBuffered ?? DEFAULT_MAX_BUFFERED,
      eventWeight,
    );
    this.subscribers.add(sub);
    return new NftMonitor(sub.queue);
  }

  /** Whether any monitor is open (the fake computes changes only then). */
  get active(): boolean {
    return this.subscribers.size > 0;
  }

  /** A committed transaction's changes, at the generation it made. */
  publish(generation: number, changes: readonly MonitorChange[]): void {
    for (const sub of this.subscribers) {
      if (sub.full) {
        sub.lost = true;
        continue;
      }
      if (sub.lost) {
        sub.lost = false;
        sub.queue.push({ type: 'lost' });
      }
      const passed = sub.skipOwnChanges ? [] : changes.filter((c) => sub.filter.change(c));
      if (passed.length === 0 && !sub.emptyTransactions) continue;
      sub.queue.push({ type: 'transaction', generation, pid: process.pid, processName: 'fake', portid: this.portid, self: true, changes: passed });
    }
  }
}
