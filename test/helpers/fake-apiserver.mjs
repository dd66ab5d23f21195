// A small stand-in for the Kubernetes API server: list and watch of Services, EndpointSlices and
// Nodes, as JSON, with resourceVersions, label selectors of the form "!key" and "key=value", the
// metadata.name field selector, paging (limit/continue), chunked watch streams that end after
// timeoutSeconds, BOOKMARK events for watches that allow them, and failures on demand: 410 Gone
// for a compacted resourceVersion, dropped connections, error statuses, slow answers. Only what
// the informer source needs; there is no cluster here.
//
// Plain JavaScript, so that one implementation serves both the in-process tests (test/k8s, through
// the types in fake-apiserver.d.mts) and the end-to-end tests, which run it as a child process inside
// a network namespace (test/e2e/fake-apiserver.mjs). Its state (objects, resourceVersions, the event
// history, as etcd keeps them) can be saved and given to the next instance, to outlive a restart.

import { createServer } from 'node:http';

const PATHS = {
  '/api/v1/services': 'services',
  '/apis/discovery.k8s.io/v1/endpointslices': 'endpointslices',
  '/api/v1/nodes': 'nodes',
};
const LIST_KIND = {
  services: ['ServiceList', 'v1', 'Service'],
  endpointslices: ['EndpointSliceList', 'discovery.k8s.io/v1', 'EndpointSlice'],
  nodes: ['NodeList', 'v1', 'Node'],
};

const keyOf = (o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** "!key", "key" and "key=value" terms, comma-separated (all must hold). */
function matchesLabels(o, selector) {
  const labels = o.metadata.labels ?? {};
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      if (term.startsWith('!')) return !(term.slice(1) in labels);
      const [k, v] = term.split('=');
      return v === undefined ? k in labels : labels[k] === v;
    });
}

function matchesFields(o, selector) {
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split('=');
      if (k === 'metadata.name') return o.metadata.name === v;
      if (k === 'metadata.namespace') return o.metadata.namespace === v;
      throw new Error(`fake apiserver: field selector ${k} is not supported`);
    });
}

function status(res, code, reason, message) {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

export class FakeApiServer {
  /** While set, watch requests are refused with 503 (an API server that is away). */
  refuseWatches = false;
  /** Answer 410 for a too-old resourceVersion as an HTTP status instead of an ERROR event. */
  goneAsHttpStatus = false;
  /** While set, watches receive nothing (no events, no bookmarks). */
  pauseWatches = false;
  /** BOOKMARK events every this many ms on watches that ask for them (0: none). */
  bookmarkMs = 0;
  /** Lists and watch headers held back this long. */
  listDelayMs = 0;
  watchDelayMs = 0;
  counts = { lists: 0, watches: 0, bookmarks: 0, gone: 0, refused: 0 };
  /** The latest requests (at most 2000): query as URLSearchParams. */
  requests = [];
  url = '';

  #server = createServer((req, res) => this.#handle(req, res));
  #rv;
  #uidSeq;
  #store = { services: new Map(), endpointslices: new Map(), nodes: new Map() };
  #history;
  /** Watches from a resourceVersion at or below this get 410 Gone. */
  #compactedRV;
  #watchers = new Set();
  #failures = [];
  /**
   * The sorted, selected objects of the latest lists, by resource and selectors, until the next
   * change: a paged list of 10k objects (the benchmark's) sorts them once, not once per page.
   */
  #listCache = new Map();

  /** `saved`: what state() returned from an earlier instance. */
  constructor(saved) {
    this.#rv = saved?.rv ?? 100;
    this.#uidSeq = saved?.uidSeq ?? 0;
    for (const r of Object.keys(this.#store)) for (const [k, v] of saved?.store?.[r] ?? []) this.#store[r].set(k, v);
    this.#history = saved?.history ?? [];
    this.#compactedRV = saved?.compactedRV ?? 0;
  }

  /** Listens on 127.0.0.1 (port 0: any); resolves with the server's URL. */
  start(port = 0) {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => resolve((this.url = `http://127.0.0.1:${this.#server.address().port}`)));
    });
  }

  async stop() {
    for (const w of this.#watchers) this.#endWatch(w, true);
    this.#server.closeAllConnections();
    await new Promise((r) => (this.#server.listening ? this.#server.close(() => r()) : r()));
  }

  // ---- the cluster's objects -------------------------------------------------------------------

  upsert(resource, obj) {
    const key = keyOf(obj);
    const existing = this.#store[resource].get(key);
    const stored = structuredClone(obj);
    stored.metadata.uid = existing?.metadata.uid ?? obj.metadata.uid ?? `uid-${++this.#uidSeq}`;
    stored.metadata.resourceVersion = String(++this.#rv);
    this.#store[resource].set(key, stored);
    this.#record(resource, existing ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  remove(resource, namespace, name) {
    const key = `${namespace ?? ''}/${name}`;
    const existing = this.#store[resource].get(key);
    if (!existing) throw new Error(`fake apiserver: no ${resource} ${key}`);
    this.#store[resource].delete(key);
    const gone = structuredClone(existing);
    gone.metadata.resourceVersion = String(++this.#rv);
    this.#record(resource, 'DELETED', gone);
  }

  // ---- failures on demand ------------------------------------------------------------------------

  /** Closes every open watch stream abruptly (the connection drops, no clean end); returns how many. */
  dropWatches() {
    const n = this.#watchers.size;
    for (const w of this.#watchers) this.#endWatch(w, true);
    return n;
  }

  /** Ends every open watch cleanly, as at timeoutSeconds; returns how many. */
  endWatches() {
    const n = this.#watchers.size;
    for (const w of this.#watchers) this.#endWatch(w, false);
    return n;
  }

  /** Forgets the history: watches from any resourceVersion seen so far get 410 Gone. */
  compact() {
    this.#compactedRV = this.#rv;
    this.#history.length = 0;
  }

  /** The next request (of the resource, list or watch) answers `code`. */
  failNext(resource, code, opts = {}) {
    for (let i = 0; i < (opts.times ?? 1); i++) this.#failures.push({ resource, watch: opts.watch, code });
  }

  /**
   * Writes `text` as it is onto every open watch stream of `resource` (a malformed stream: a cut
   * JSON line, junk, an event of another kind); nothing is stored or kept in the history, so a
   * watch opened later never sees it. Returns how many streams got it.
   */
  writeToWatches(resource, text) {
    let n = 0;
    for (const w of this.#watchers) {
      if (w.resource !== resource || this.pauseWatches) continue;
      w.res.write(text);
      n++;
    }
    return n;
  }

  get openWatches() {
    return this.#watchers.size;
  }

  get resourceVersion() {
    return this.#rv;
  }

  /** Everything a later instance needs to go on from here (JSON-serializable). */
  state() {
    const store = Object.fromEntries(Object.entries(this.#store).map(([r, m]) => [r, [...m.entries()]]));
    return { rv: this.#rv, uidSeq: this.#uidSeq, compactedRV: this.#compactedRV, history: this.#history, store };
  }

  // ---- HTTP ---------------------------------------------------------------------------------------

  #record(resource, type, object) {
    const entry = { rv: this.#rv, resource, type, object };
    this.#listCache.clear();
    this.#history.push(entry);
    for (const w of this.#watchers) if (w.resource === resource) this.#send(w, entry);
  }

  #handle(req, res) {
    const url = new URL(req.url ?? '/', 'http://x');
    const resource = PATHS[url.pathname];
    if (!resource) return status(res, 404, 'NotFound', `the server could not find the requested resource ${url.pathname}`);
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    this.requests.push({ at: Date.now(), resource, watch, query: url.searchParams, authorization: req.headers.authorization, userAgent: req.headers['user-agent'] ?? '' });
    if (this.requests.length > 2000) this.requests.splice(0, 1000);
    const i = this.#failures.findIndex((f) => (f.resource === '*' || f.resource === resource) && (f.watch === undefined || f.watch === watch));
    if (i >= 0) {
      const [f] = this.#failures.splice(i, 1);
      return status(res, f.code, f.code === 410 ? 'Expired' : 'InternalError', `injected failure ${f.code}`);
    }
    const go = () => {
      if (!watch) return this.#list(resource, url.searchParams, res);
      if (this.refuseWatches) {
        this.counts.refused++;
        return status(res, 503, 'ServiceUnavailable', 'apiserver is shutting down');
      }
      this.#watch(resource, url.searchParams, res);
    };
    const delay = watch ? this.watchDelayMs : this.listDelayMs;
    if (delay > 0) setTimeout(go, delay);
    else go();
  }

  #list(resource, q, res) {
    this.counts.lists++;
    const cacheKey = `${resource}?${q.get('labelSelector') ?? ''}?${q.get('fieldSelector') ?? ''}`;
    let all = this.#listCache.get(cacheKey);
    if (!all) {
      all = [...this.#store[resource].values()]
        .filter((o) => matchesLabels(o, q.get('labelSelector') ?? '') && matchesFields(o, q.get('fieldSelector') ?? ''))
        .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
      this.#listCache.set(cacheKey, all);
    }
    const limit = Number(q.get('limit') ?? 0);
    let start = 0;
    let listRV = String(this.#rv);
    const cont = q.get('continue');
    if (cont) {
      const token = JSON.parse(Buffer.from(cont, 'base64').toString());
      if (Number(token.rv) <= this.#compactedRV) return status(res, 410, 'Expired', 'The provided continue parameter is too old');
      start = token.start;
      listRV = token.rv;
    }
    const items = limit > 0 ? all.slice(start, start + limit) : all.slice(start);
    const next = limit > 0 && start + limit < all.length ? Buffer.from(JSON.stringify({ start: start + limit, rv: listRV })).toString('base64') : undefined;
    const [kind, apiVersion] = LIST_KIND[resource];
    // As the real server: list items carry neither kind nor apiVersion.
    const bare = items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind, apiVersion, metadata: { resourceVersion: listRV, ...(next ? { continue: next } : {}) }, items: bare }));
  }

  #watch(resource, q, res) {
    this.counts.watches++;
    const from = Number(q.get('resourceVersion') || this.#rv);
    if (from < this.#compactedRV) {
      this.counts.gone++;
      const message = `too old resource version: ${from} (${this.#compactedRV})`;
      if (this.goneAsHttpStatus) return status(res, 410, 'Expired', message);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason: 'Expired', code: 410 } })}\n`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    const w = { resource, query: q, res, timer: undefined, bookmarks: undefined };
    w.timer = setTimeout(() => this.#endWatch(w, false), timeout > 0 ? timeout * 1000 : 3_600_000);
    if (q.get('allowWatchBookmarks') === 'true' && this.bookmarkMs > 0) {
      const [, apiVersion, kind] = LIST_KIND[resource];
      w.bookmarks = setInterval(() => {
        if (this.pauseWatches) return;
        this.counts.bookmarks++;
        res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion, metadata: { resourceVersion: String(this.#rv) } } })}\n`);
      }, this.bookmarkMs);
    }
    this.#watchers.add(w);
    res.on('close', () => {
      clearTimeout(w.timer);
      clearInterval(w.bookmarks);
      this.#watchers.delete(w);
    });
    for (const e of this.#history) if (e.resource === resource && e.rv > from) this.#send(w, e);
  }

  #send(w, e) {
    if (this.pauseWatches) return;
    if (!matchesLabels(e.object, w.query.get('labelSelector') ?? '') || !matchesFields(e.object, w.query.get('fieldSelector') ?? '')) return;
    w.res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
  }

  #endWatch(w, abruptly) {
    clearTimeout(w.timer);
    clearInterval(w.bookmarks);
    this.#watchers.delete(w);
    if (abruptly) w.res.socket?.destroy();
    else w.res.end();
  }
}
