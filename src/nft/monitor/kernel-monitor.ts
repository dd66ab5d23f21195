// Nftables.monitor: the addon's monitor socket (native/monitor.h) in the connection's namespace,
// its batches decoded and grouped into transactions, buffered for the consumer. While the buffer is
// full the socket is not read; the kernel then keeps events in the socket buffer (SO_RCVBUF) and,
// once that is full too, drops them and says so (ENOBUFS), which the consumer sees as `lost`.

import type { NativeBinding, NativeMonitor } from '../../native/binding.js';
import type { DumpOptions } from '../connection.js';
import type { Ruleset } from '../objects.js';
import { MonitorDecoder } from './event-decoder.js';
import { EventQueue } from './event-queue.js';
import type { MonitorEvent, MonitorOptions } from './events.js';
import { MonitorFilter } from './filter.js';
import { NftMonitor } from './nft-monitor.js';
import { eventWeight, TransactionAssembler } from './transactions.js';

/** The addon's onEvents `what` (native/monitor.h MonitorCall). */
const EVENTS = 0;
const LOST = 1;
const FAILED = 2;

export const DEFAULT_MAX_BUFFERED = 65536;
export const DEFAULT_RECEIVE_BUFFER = 8 * 1024 * 1024;

/** What the monitor needs of the connection it is opened from. */
export interface MonitorHost {
  native: NativeBinding;
  netns: string | number | undefined;
  /** The connection's socket's port id: its commits are `self`. */
  portid: number;
  dump(opts: DumpOptions): Promise<Ruleset>;
}

export function openKernelMonitor(host: MonitorHost, opts: MonitorOptions = {}): NftMonitor {
  const { native } = host;
  const filter = new MonitorFilter(opts);
  const decoder = new MonitorDecoder(filter);
  const assembler = new TransactionAssembler(host.portid, opts.emptyTransactions === true, opts.skipOwnChanges === true);
  let m: NativeMonitor | undefined;
  // Reading waits for two things: the sets to be known (the first dump) and room in the buffer.
  let seeding = true;
  let full = false;
  let reading = true;
  const apply = (): void => {
    if (!m) return;
    const want = !seeding && !full;
    if (want === reading) return;
    reading = want;
    if (want) native.monitorResume(m);
    else native.monitorPause(m);
  };
  const queue = new EventQueue<MonitorEvent>(
    {
      pause: () => ((full = true), apply()),
      resume: () => ((full = false), apply()),
      close: () => {
        if (m) native.monitorClose(m);
      },
    },
    opts.maxBuffered ?? DEFAULT_MAX_BUFFERED,
    eventWeight,
  );
  m = native.monitorOpen(
    host.netns,
    opts.receiveBuffer ?? DEFAULT_RECEIVE_BUFFER,
    (what, batch, message) => {
      try {
        if (what === EVENTS && batch) {
          decoder.add(batch, (r) => {
            const ev = assembler.record(r);
            if (ev) queue.push(ev);
          });
        } else if (what === LOST) {
          decoder.reset();
          queue.push(assembler.lost());
          // Sets may have come and gone in the gap: read them again before decoding on.
          decoder.sets.clear();
          void seed();
        } else if (what === FAILED) {
          queue.fail(new Error(message));
        }
      } catch (e) {
        queue.fail(e);
      }
    },
    opts.skipOwnChanges ? host.portid : undefined,
  );
  // The sets alone, the anonymous ones included (what element and set events are decoded with):
  // no chains and rules, which on a table of thousands of rules cost more than the sets.
  const scope: DumpOptions = { elements: false, chains: false };
  if (opts.family !== undefined) scope.family = opts.family;
  if (opts.table !== undefined) scope.table = opts.table;
  // Reads the sets in scope while the socket is not read (the kernel queues what is committed
  // meanwhile): at the start, and after a loss.
  async function seed(): Promise<void> {
    seeding = true;
    apply();
    try {
      decoder.sets.seed(await host.dump(scope));
    } catch {
      // Without them, elements of sets the monitor has not seen added come `undecoded`.
    } finally {
      seeding = false;
      if (!queue.closed) apply();
    }
  }
  const ready = seed();
  return new NftMonitor(queue, ready);
}
