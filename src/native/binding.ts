// Typed loader for the C++ addon. The contract is native/README.md.
//
// node-gyp-build finds it: build/Release/nftlink.node when the addon was built here (a checkout, or
// an install that compiled from source), else the prebuilt addon the package ships
// (prebuilds/linux-x64/nftlink.glibc.node, libnftnl and libmnl linked in: scripts/build-prebuilt.sh).
import { createRequire } from "node:module";
import { join } from "node:path";
import { packageRoot } from "../package-root.js";

declare const nativeHandleBrand: unique symbol;

/** An open netlink socket in one network namespace. Opaque: only the addon can make or read one. */
export type NativeHandle = { readonly [nativeHandleBrand]: true };

declare const nativeStreamBrand: unique symbol;

/** A streamed commit in progress (commitStream). Opaque. */
export type NativeCommitStream = { readonly [nativeStreamBrand]: true };

declare const nativeMonitorBrand: unique symbol;

/** An nf_tables event monitor (monitorOpen). Opaque. */
export type NativeMonitor = { readonly [nativeMonitorBrand]: true };

/**
 * The monitor's callback: `what` 0 events (`batch`: a compact-format message of events), 1 lost
 * (the socket overran, ENOBUFS), 2 failed (`message`; the monitor has closed itself).
 */
export type NativeMonitorCallback = (what: 0 | 1 | 2, batch: Uint8Array | null, message: string) => void;

/** One kernel refusal, mapped back to the request. */
export interface NativeError {
  /** Index of the operation in the request; -1 for a batch-level error. */
  op: number;
  /** Index of the element within that operation's element list; -1 when not an element error. */
  element: number;
  /** Positive errno (EEXIST = 17, ENOENT = 2, ERESTART = 85 ...). */
  errno: number;
  /** The kernel's extended-ack message, '' when it gave none. */
  message: string;
  /** 'op': an operation was refused; 'batch': the kernel answered for the batch as a whole. */
  phase: "op" | "batch";
  /**
   * Where in the refused message the kernel pointed (NLMSGERR_ATTR_OFFS), level by level: pairs of
   * (attribute type, index among its siblings), outermost first. Empty when it pointed nowhere.
   */
  attrPath: number[];
}

/** The handle the kernel gave a rule sent with NLM_F_ECHO. */
export interface NativeRuleHandle {
  /** Index of the operation in the request. */
  op: number;
  /** NFTA_RULE_HANDLE (a per-table counter from 1: exact as a number). */
  handle: number;
}

export interface NativeCommitResult {
  /** Empty when the kernel committed (or, in check mode, validated) everything. */
  errors: NativeError[];
  /**
   * For a committed batch, one entry per NEWRULE operation sent with NLM_F_ECHO (0x8), in request
   * order; none when the batch was refused or in check mode. An echoed operation without an entry
   * had its echo dropped by the kernel.
   */
  handles: NativeRuleHandle[];
}

/**
 * A conntrack flow matches when its original tuple has this protocol and destination port and, when
 * given, this original destination address and this reply source address (the DNAT target).
 */
export interface NativeConntrackFilter {
  /** IP protocol number: UDP 17, SCTP 132, TCP 6. */
  protocol: number;
  /** The original destination port (1..65535). */
  dstPort: number;
  /** The original destination address (the service IP); omitted: any. */
  dst?: string;
  /** The reply source address (the endpoint a DNAT'ed flow goes to); omitted: any. */
  replySrc?: string;
  /** Only flows that were not DNAT'ed (reply source = original destination). */
  notNatted?: boolean;
}

export interface NativeConntrackResult {
  /** Flows of the filters' protocols the dump returned. */
  scanned: number;
  /** Flows the kernel deleted. */
  deleted: number;
  /** Deletes answered ENOENT: the flow expired or was replaced in between (not an error). */
  vanished: number;
  /** Deletes the kernel refused for another reason. */
  failed: number;
  /** Their errnos (the first 64). */
  errors: number[];
}

export interface NativeBinding {
  /**
   * Opens a NETLINK_NETFILTER socket. No argument: the caller's namespace. A string without '/' is a
   * name from `ip netns add` (/run/netns/NAME); a string with '/' is a path; a number an open netns fd.
   */
  open(netns?: string | number): NativeHandle;
  /**
   * Sends one compact-format request as one batch. Rejects only for a malformed buffer or a socket failure.
   * The addon reads `buf` in place while the promise is pending: do not modify or transfer it until then.
   */
  commit(h: NativeHandle, buf: Uint8Array): Promise<NativeCommitResult>;
  /**
   * A streamed commit on `h`: the request is fed in parts while it is still being encoded, and the
   * addon turns each part into netlink messages on the libuv pool meanwhile; nothing is sent before
   * commitStreamEnd. See native/README.md, "Streamed commits".
   */
  commitStream(h: NativeHandle): NativeCommitStream;
  /**
   * `operations` whole operations of the compact format, without the header, continuing where the
   * previous part ended. Read in place by the pool thread (a SharedArrayBuffer-backed part is copied):
   * do not modify its bytes while the stream lives; the stream keeps the array alive. Throws once it has
   * ended or was cancelled; a malformed part is reported by commitStreamEnd.
   */
  commitStreamFeed(s: NativeCommitStream, part: Uint8Array, operations: number): void;
  /**
   * Builds what is left and sends the batch: resolves and rejects as commit() does (`flags`: the
   * header's, 1 CHECK, 2 GENID with `genid`). Once per stream.
   */
  commitStreamEnd(s: NativeCommitStream, flags: number, genid: number): Promise<NativeCommitResult>;
  /** Drops the stream's parts; nothing is sent. Idempotent. */
  commitStreamCancel(s: NativeCommitStream): void;
  /**
   * `what`: bitmask 1 tables, 2 chains, 4 sets, 8 elements, 16 rules, 32 objects, 64 flowtables,
   * and 128: with 8, not the elements of anonymous sets whose userdata holds nftlink's elements
   * digest (inline-set.ts); 256 rules chain by chain; 512 not the expressions of digested rules;
   * 1024: with 4 and 8, each named non-interval set's element hashes (a kind-8 op after its
   * elements: native/README.md). `family` 0 = all.
   * Resolves with the compact reply format, one consistent generation (header genid).
   */
  dump(h: NativeHandle, what: number, family: number, table: string | null, chain?: string | null, omitElementsOf?: readonly string[] | null): Promise<Uint8Array>;
  /** One set's elements only (a single kind-4 operation in the reply format). */
  dumpSetElements(h: NativeHandle, family: number, table: string, set: string): Promise<Uint8Array>;
  /**
   * dumpSetElements, streamed: `onChunk` receives the reply in parts while the kernel is still producing
   * the rest, each part a complete reply message (one kind-4 operation holding some of the elements).
   * `attempt` counts from 0: a part with a higher attempt than the one before means the dump started
   * over (the generation moved, or the kernel repeated elements), so discard every earlier part.
   * Resolves after the last part with the generation and the attempt whose parts make the answer
   * (none of them, for an empty set). If `onChunk` throws, no further part comes and the promise
   * rejects with what it threw.
   */
  dumpSetElementsStream(
    h: NativeHandle,
    family: number,
    table: string,
    set: string,
    onChunk: (part: Uint8Array, attempt: number) => void,
  ): Promise<{ generation: number; attempt: number }>;
  /** NFT_MSG_GETGEN. */
  getGeneration(h: NativeHandle): Promise<number>;
  /**
   * Dumps the conntrack table of the handle's namespace for `family` (2 ipv4, 10 ipv6) and deletes every
   * flow that matches any filter, in one call. Rejects for a bad argument, or when the dump or the socket fails.
   */
  conntrackDelete(h: NativeHandle, family: 2 | 10, filters: readonly NativeConntrackFilter[]): Promise<NativeConntrackResult>;
  /** Idempotent; a closed handle rejects further calls. */
  close(h: NativeHandle): void;
  /** The netlink port id the kernel bound the handle's socket to (the monitor's `portid` of its commits). */
  portid(h: NativeHandle): number;
  /**
   * Subscribes to the nf_tables events (NFNLGRP_NFTABLES) of a namespace (`netns` as for open()), with
   * SO_RCVBUF set to `rcvbuf` bytes. `onEvents` runs on the JS thread as events arrive (the socket is
   * polled on the event loop, never read blocking). Changes committed through netlink port
   * `skipPortid` are not decoded (only their generation event comes). See native/README.md, "The monitor".
   */
  monitorOpen(netns: string | number | undefined, rcvbuf: number, onEvents: NativeMonitorCallback, skipPortid?: number): NativeMonitor;
  /** Stops reading (the kernel queues events in the socket buffer, then drops them: a later `lost`). */
  monitorPause(m: NativeMonitor): void;
  monitorResume(m: NativeMonitor): void;
  /** Idempotent: unsubscribes and closes the socket; no callback comes after it. */
  monitorClose(m: NativeMonitor): void;
  /** The monitor socket's port id, SO_RCVBUF as the kernel reports it (twice what was asked), and whether it is closed. */
  monitorInfo(m: NativeMonitor): { portid: number; rcvbuf: number; closed: boolean };
  /**
   * Dials address:port (non-blocking, giving up after timeoutMs) and relays bytes both ways between
   * it and the client socket with splice(2), on the addon's relay thread, keeping half-close.
   * Resolves when both directions ended, or on a failed dial, an error or a cancel (`error` says
   * which; the client socket is then shut down). The client fd is dup'ed: the caller still owns (and
   * closes) its own, and must not read or write it meanwhile.
   */
  relayDial(clientFd: number, address: string, port: number, timeoutMs: number): Promise<NativeRelayResult> & { relayId: number };
  /** Ends a running relay at once; its promise resolves with error "cancelled". Unknown ids are ignored. */
  relayCancel(id: number): void;
  /** Relays running now. */
  relayCount(): number;
  /** Returns the C heap's free pages to the kernel (glibc's malloc_trim); whether any were released. */
  trimMemory(): boolean;
  /**
   * Reclaims the pages of the node executable's read-only file mappings (MADV_PAGEOUT, Linux 5.4):
   * what starting up read and an idle process does not use again. The bytes of address range
   * advised; 0 where the kernel lacks it.
   */
  releaseExecutablePages(): number;
}

export interface NativeRelayResult {
  /** Bytes copied from the client to the endpoint, and back. */
  aToB: number;
  bToA: number;
  /** '' when both directions ended with an EOF; else what ended the relay. */
  error: string;
}

let cached: NativeBinding | undefined;

/** Loads the addon once; throws a clear Error when there is none for this machine. */
export function loadNative(): NativeBinding {
  if (cached) return cached;
  const root = packageRoot();
  const require = createRequire(join(root, "package.json"));
  const load = require("node-gyp-build") as (dir: string) => unknown;
  try {
    cached = load(root) as NativeBinding;
  } catch (err) {
    throw new Error(
      "nftlink: no native addon for this machine (the package ships one for Linux x64 with glibc 2.34+ and GCC 12's libstdc++): " +
        "build it with `npm run build:native` (needs libnftnl-dev libmnl-dev pkg-config build-essential python3)",
      { cause: err },
    );
  }
  return cached;
}
