// List+watch of one resource, kept in a cache, as client-go's reflector and informer do for
// kube-proxy, with the gaps of client-node's ListWatch closed:
//
// - any failure (refused list, broken watch, server error) is retried with exponential backoff
//   (backoff.ts, capped at 30 s) instead of stopping;
// - a watch the server ends normally (its timeoutSeconds, 5 to 10 minutes, randomized as
//   client-go does so that watches of many nodes do not end together) is re-opened at once from
//   the last resourceVersion;
// - "410 Gone" (the resourceVersion is older than the API server keeps history for) relists and
//   emits only the real differences against the cache: an object whose uid and resourceVersion
//   are unchanged produces no event, so a relist does not delete and re-add every Service (which
//   would flap every rule of the proxy);
// - a watch silent for longer than its timeout plus a margin is treated as a dead connection
//   (TCP keepalive alone takes the kernel's probe count to notice).
//
// Lists are consistent reads (resourceVersion unset) in pages of 500, so a relist after 410 sees
// current data; the watch then continues from the list's resourceVersion with bookmarks on. A
// first list is delivered page by page as it arrives; a relist is compared with the cache whole.
//
// The cache keeps each object's identity (kind, apiVersion, and metadata's name, namespace, uid
// and resourceVersion), not the object: that is all a relist compares and all a delete announces,
// and the handler keeps what it reads of the object itself. At 10k Services with 50k endpoints the
// objects as parsed were about a fifth of the proxy's heap, held twice over.
//
// Every object is checked by the spec's validate() before it is cached or delivered: one of the
// wrong shape is reported (problem) and treated as absent, so its earlier version, if any, is
// deleted, and the handler only ever sees objects of the type it expects. An event whose object says
// it is of another kind (a misrouted event; the API server never sends one) is reported and
// ignored: it says nothing about the object of that name, so it neither replaces nor deletes it.

import { ApiStatusError, type ApiClient, type WatchEvent } from './api-client.js';
import { Backoff, sleep, type BackoffOptions } from './backoff.js';
import type { EventType, ObjectMeta } from './objects.js';
import type { Logger } from '../logging/logger.js';
import { printable } from './validation/printable.js';

export interface ResourceSpec {
  /** The kind of the objects: set on list items, which the API server sends without it. */
  kind: string;
  apiVersion: string;
  /** The collection's path: /api/v1/services. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Why an object cannot be used (its shape), or undefined when it can. Without it, any object with a name is. */
  validate?(obj: unknown): string | undefined;
}

export interface KubeObject {
  kind?: string;
  apiVersion?: string;
  metadata?: ObjectMeta;
}

export interface ReflectorHandler<T extends KubeObject> {
  /**
   * An object was added, updated or deleted. A delete found by a relist, or a watched object
   * refused by validate(), carries the object's identity only (kind, apiVersion, metadata's name,
   * namespace, uid and resourceVersion): the reflector keeps no more of it.
   */
  event(type: EventType, obj: T): void;
  /** The first list has been delivered (called once). */
  listed(): void;
  /** An object the reflector cannot use (no metadata.name, or refused by validate()): skipped. */
  problem(origin: string, reason: string): void;
}

export interface ReflectorOptions {
  backoff?: BackoffOptions;
  /** Items per list page (default 500, as client-go's pager). */
  pageSize?: number;
  /** The watch's timeoutSeconds, asked anew for each watch (default 300..600 at random, as client-go). */
  watchTimeoutSeconds?: () => number;
  /** How long a list request may stay silent (default 60 s). */
  listIdleTimeoutMs?: number;
  log: Logger;
}

/** A watch that ends this soon after opening, with no event, counts as a failure (no hot loop). */
const MIN_HEALTHY_WATCH_MS = 1000;
/** Silence tolerated past the watch's own timeout before the connection is presumed dead. */
const WATCH_SILENCE_MARGIN_MS = 30_000;

class GoneError extends Error {}

export class Reflector<T extends KubeObject> {
  /** "namespace/name" -> the object's identity (identityOf). */
  private readonly cache = new Map<string, T>();
  private resourceVersion: string | undefined;
  private readonly backoff: Backoff;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private listedOnce = false;
  /** For tests and logs: lists and watches started. */
  readonly stats = { lists: 0, watches: 0, relistsAfterGone: 0, failures: 0 };

  constructor(
    private readonly api: ApiClient,
    private readonly spec: ResourceSpec,
    private readonly handler: ReflectorHandler<T>,
    private readonly opts: ReflectorOptions,
  ) {
    this.backoff = new Backoff(opts.backoff);
  }

  start(): void {
    if (this.running) throw new Error(`${this.spec.kind} reflector: already started`);
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  /** The objects now known, by "namespace/name": their identities (identityOf), not their contents. */
  objects(): ReadonlyMap<string, T> {
    return this.cache;
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** The last watch delivered an event or stayed open a while before it ended. */
  private lastWatchHealthy = false;

  private async loop(): Promise<void> {
    let goneInARow = 0;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        await this.watchOnce();
        goneInARow = 0;
      } catch (err) {
        if (this.stopped) break;
        // A watch that worked for a while and then broke starts the count over: a 410 minutes later
        // is not "twice in a row", and relists at once.
        if (this.lastWatchHealthy) goneInARow = 0;
        if (err instanceof GoneError) {
          this.stats.relistsAfterGone++;
          this.resourceVersion = undefined;
          this.opts.log.info('watch expired (410 Gone): relisting', { kind: this.spec.kind, reason: err.message });
          // Relist at once, as client-go does; twice in a row means something is off: back off.
          if (++goneInARow === 1) continue;
        }
        this.stats.failures++;
        const delay = this.backoff.next();
        this.opts.log.warn('list/watch failed; retrying', { kind: this.spec.kind, retryInMs: Math.round(delay), reason: (err as Error).message });
        await sleep(delay, this.abort.signal);
      }
    }
  }

  private query(extra: Record<string, string>): string {
    const q = new URLSearchParams();
    if (this.spec.labelSelector) q.set('labelSelector', this.spec.labelSelector);
    if (this.spec.fieldSelector) q.set('fieldSelector', this.spec.fieldSelector);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return `${this.spec.path}?${q.toString()}`;
  }

  private async relist(): Promise<void> {
    this.stats.lists++;
    // Into an empty cache (the first list, or one after the first failed) nothing can be deleted
    // and nothing compared, so each page is delivered as it comes: the parsed objects are then
    // garbage a page later. Held to the end of the list instead, all of them outlived the young
    // generation and were copied into the old one (at 10k Services and 10k EndpointSlices, tens of
    // MB). Any other list is compared whole (replace), and so is a list started over after its
    // continue token expired.
    let deliverPages = this.cache.size === 0;
    const fresh = new Map<string, T>();
    let resourceVersion = '';
    let cont = '';
    let restarted = false;
    const limits = { signal: this.abort.signal, idleTimeoutMs: this.opts.listIdleTimeoutMs ?? 60_000 };
    for (;;) {
      let page: Record<string, unknown>;
      try {
        page = await this.api.getJson(this.query({ limit: String(this.opts.pageSize ?? 500), ...(cont ? { continue: cont } : {}) }), limits);
      } catch (err) {
        // The continue token expired between pages: start the list over once.
        if (cont && !restarted && err instanceof ApiStatusError && err.code === 410) {
          restarted = true;
          cont = '';
          fresh.clear();
          // What the pages before gave is in the cache now: the new list is compared with it.
          deliverPages = false;
          continue;
        }
        throw err;
      }
      const items: unknown[] = Array.isArray(page.items) ? page.items : [];
      for (const [i, item] of items.entries()) {
        const usable = this.usable(item, `list item ${i}`);
        if (!usable) continue;
        if (deliverPages) this.deliver(usable.key, usable.object);
        else fresh.set(usable.key, usable.object);
      }
      const meta = (page.metadata ?? {}) as { resourceVersion?: string; continue?: string };
      resourceVersion = meta.resourceVersion ?? resourceVersion;
      cont = meta.continue ?? '';
      if (!cont) break;
    }
    if (!deliverPages) this.replace(fresh);
    this.resourceVersion = resourceVersion;
    if (!this.listedOnce) {
      this.listedOnce = true;
      this.handler.listed();
    }
  }

  /** Emits the differences between the cache and a fresh list, then keeps the list. */
  private replace(fresh: Map<string, T>): void {
    for (const [key, old] of this.cache) {
      const now = fresh.get(key);
      // Gone, or deleted and created again under the same name while we were not watching.
      if (!now || now.metadata?.uid !== old.metadata?.uid) {
        this.cache.delete(key);
        this.handler.event('delete', old);
      }
    }
    for (const [key, obj] of fresh) this.deliver(key, obj);
  }

  /** A listed object into the cache: an add, an update when its resourceVersion moved, else nothing. */
  private deliver(key: string, obj: T): void {
    const old = this.cache.get(key);
    this.cache.set(key, identityOf(obj));
    if (!old) this.handler.event('add', obj);
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.handler.event('update', obj);
  }

  private async watchOnce(): Promise<void> {
    this.stats.watches++;
    const timeoutSeconds = Math.max(1, Math.round(this.opts.watchTimeoutSeconds?.() ?? 300 + Math.random() * 300));
    const path = this.query({
      watch: 'true',
      resourceVersion: this.resourceVersion ?? '',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(timeoutSeconds),
    });
    const openedAt = Date.now();
    let events = 0;
    this.lastWatchHealthy = false;
    try {
      await this.api.watch(path, { signal: this.abort.signal, idleTimeoutMs: timeoutSeconds * 1000 + WATCH_SILENCE_MARGIN_MS }, (e) => {
        if (e.type !== 'ERROR') this.lastWatchHealthy = true;
        events++;
        this.apply(e);
      });
    } catch (err) {
      if (Date.now() - openedAt >= MIN_HEALTHY_WATCH_MS) this.lastWatchHealthy = true;
      if (err instanceof ApiStatusError && err.code === 410) throw new GoneError(err.message);
      throw err;
    }
    if (events === 0 && Date.now() - openedAt < MIN_HEALTHY_WATCH_MS) throw new Error(`watch ${this.spec.path} ended at once`);
  }

  private apply(e: WatchEvent): void {
    const obj = (e.object ?? {}) as T & { code?: number; message?: string; reason?: string };
    if (e.type === 'ERROR') {
      const status = obj as { code?: number; message?: string; reason?: string };
      if (status.code === 410) throw new GoneError(status.message ?? 'resource version too old');
      throw new ApiStatusError(status.code ?? 0, status.reason ?? '', `watch ${this.spec.path}: ${status.code ?? '?'} ${status.message ?? ''}`.trim());
    }
    const meta: unknown = obj.metadata;
    const metaRv: unknown = meta !== null && typeof meta === 'object' ? (meta as ObjectMeta).resourceVersion : undefined;
    const rv = typeof metaRv === 'string' ? metaRv : undefined;
    if (e.type === 'BOOKMARK') {
      if (rv) this.resourceVersion = rv;
      return;
    }
    const otherKind = this.otherKind(e.object);
    if (otherKind !== undefined) {
      const key = this.keyOf(e.object);
      this.handler.problem(`${this.spec.kind} ${key === undefined ? '(no name)' : printable(key)} (${e.type} event)`, `the object's kind is ${printable(otherKind)}, not ${this.spec.kind}: ignored`);
      return;
    }
    const usable = this.usable(e.object, `${e.type} event`);
    if (!usable) {
      // Refused: what we had under its name (if we can tell the name) is gone as far as the proxy is concerned.
      const key = this.keyOf(e.object);
      const old = key === undefined ? undefined : this.cache.get(key);
      if (key !== undefined && old) {
        this.cache.delete(key);
        this.handler.event('delete', old);
      }
      if (rv) this.resourceVersion = rv;
      return;
    }
    const { key, object } = usable;
    const old = this.cache.get(key);
    if (e.type === 'DELETED') {
      if (old) {
        this.cache.delete(key);
        this.handler.event('delete', object);
      }
    } else if (e.type === 'ADDED' || e.type === 'MODIFIED') {
      this.cache.set(key, identityOf(object));
      if (!old) this.handler.event('add', object);
      else if (old.metadata?.uid !== object.metadata?.uid) {
        this.handler.event('delete', old);
        this.handler.event('add', object);
      } else if (old.metadata?.resourceVersion !== rv) this.handler.event('update', object);
    }
    if (rv) this.resourceVersion = rv;
  }

  /** The object with its kind and apiVersion, and its cache key; or undefined, reported, when it cannot be used. */
  private usable(raw: unknown, where: string): { key: string; object: T } | undefined {
    const key = this.keyOf(raw);
    if (key === undefined) {
      this.handler.problem(`${this.spec.kind} ${where}`, 'object without metadata.name');
      return undefined;
    }
    // List items come without kind and apiVersion; the rest of the proxy expects them.
    const object = { ...(raw as T), kind: this.spec.kind, apiVersion: this.spec.apiVersion };
    const reason = this.spec.validate?.(object);
    if (reason !== undefined) {
      this.handler.problem(`${this.spec.kind} ${printable(key)} (${where})`, reason);
      return undefined;
    }
    return { key, object };
  }

  /** The kind the object says it is, when it says one and that is not the spec's (list items say none). */
  private otherKind(raw: unknown): string | undefined {
    const kind: unknown = raw !== null && typeof raw === 'object' ? (raw as { kind?: unknown }).kind : undefined;
    if (kind === undefined || kind === this.spec.kind) return undefined;
    return typeof kind === 'string' ? kind : JSON.stringify(kind) ?? String(kind);
  }

  /** "namespace/name" of anything with a metadata.name, whatever else is wrong with it. */
  private keyOf(raw: unknown): string | undefined {
    const meta = raw !== null && typeof raw === 'object' ? (raw as KubeObject).metadata : undefined;
    const name: unknown = meta !== null && typeof meta === 'object' ? meta.name : undefined;
    if (typeof name !== 'string' || name === '') return undefined;
    const namespace: unknown = meta!.namespace;
    return `${typeof namespace === 'string' ? namespace : ''}/${name}`;
  }
}

/** What the cache keeps of an object: what a relist compares and a delete announces. */
function identityOf<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata!;
  const identity: ObjectMeta = { name: meta.name };
  if (meta.namespace !== undefined) identity.namespace = meta.namespace;
  if (meta.uid !== undefined) identity.uid = meta.uid;
  if (meta.resourceVersion !== undefined) identity.resourceVersion = meta.resourceVersion;
  return { kind: obj.kind, apiVersion: obj.apiVersion, metadata: identity } as T;
}
