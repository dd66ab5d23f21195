// The API server of the reliability harness, as a child process inside the node namespace (where
// `nftlink proxy` reaches it on 127.0.0.1, as on a node with hostNetwork): the fake API server of
// the tests (test/helpers/fake-apiserver.mjs) plus the churn that drives it, so that changes are
// made at their rate by the process that serves them, with no round trip per change.
//
//   node api-child.mjs PORT
//
// Control: one JSON command per line on stdin, one JSON answer per line on stdout ({id, ok,
// result} or {id, ok: false, error}). The server listens only after {op: "listen"}.
// Commands:
//   upsertMany {items: [{resource, obj}]}, removeMany {items: [{resource, namespace, name}]}
//   churn {rate, slices, probed, probedShare, pool, pools}: from now on, `rate` EndpointSlice
//     changes per second. Each change takes one slice: with probability probedShare one of `probed`
//     (its endpoints become a random non-empty subset of `pool`, the addresses of real pods), else
//     one of `slices` (one endpoint address replaced: by one of pools[slice name] it does not use,
//     or by the next of 198.18.220.0-198.18.255.255). Each change carries the endpoint
//     controller's trigger-time annotation: the time it was made.
//   stopChurn: stops it; answers {changes, ms}
//   objects: every Service and EndpointSlice, for `nftlink render`
//   stats, listen, stop

import { FakeApiServer } from '../../test/helpers/fake-apiserver.mjs';
import { serveCommands } from '../../test/helpers/line-rpc-serve.mjs';

const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';
const api = new FakeApiServer();
const port = Number(process.argv[2]);

/** 198.18.220.0 .. 198.18.255.255, in turn: addresses in the pod CIDR that no pod has. */
let nextAddress = 0;
const freshAddress = () => {
  const n = nextAddress++ % (36 * 256);
  return `198.18.${220 + (n >> 8)}.${n & 255}`;
};

let churn;

function changeOne(c) {
  const probed = c.probed.length > 0 && Math.random() < c.probedShare;
  const list = probed ? c.probed : c.slices;
  const slice = structuredClone(list[Math.floor(Math.random() * list.length)]);
  if (probed) {
    const subset = c.pool.filter(() => Math.random() < 0.5);
    const addresses = subset.length ? subset : [c.pool[Math.floor(Math.random() * c.pool.length)]];
    const template = slice.endpoints[0];
    slice.endpoints = addresses.map((a) => ({ ...template, addresses: [a] }));
  } else if (slice.endpoints.length) {
    const own = c.pools[slice.metadata.name];
    const used = new Set(slice.endpoints.map((e) => e.addresses[0]));
    const free = own?.filter((a) => !used.has(a));
    const address = free?.length ? free[Math.floor(Math.random() * free.length)] : freshAddress();
    slice.endpoints[Math.floor(Math.random() * slice.endpoints.length)].addresses = [address];
  }
  slice.metadata.annotations = { ...(slice.metadata.annotations ?? {}), [TRIGGER]: new Date().toISOString() };
  const stored = api.upsert('endpointslices', slice);
  // The next change of this slice starts from what is stored now.
  list[list.findIndex((s) => s.metadata.name === slice.metadata.name && s.metadata.namespace === slice.metadata.namespace)] = stored;
  c.changes++;
}

function startChurn(c) {
  const state = { ...c, changes: 0, t0: performance.now() };
  // Every 10 ms, as many changes as are due: the rate holds however the timer drifts.
  state.timer = setInterval(() => {
    const due = Math.floor(((performance.now() - state.t0) * state.rate) / 1000) - state.changes;
    for (let i = 0; i < due; i++) changeOne(state);
  }, 10);
  return state;
}

const commands = {
  listen: () => api.start(port),
  upsertMany: (c) => {
    for (const { resource, obj } of c.items) api.upsert(resource, obj);
    return c.items.length;
  },
  removeMany: (c) => {
    for (const { resource, namespace, name } of c.items) api.remove(resource, namespace, name);
    return c.items.length;
  },
  churn: (c) => {
    if (churn) throw new Error('churn is running');
    churn = startChurn(c);
  },
  stopChurn: () => {
    if (!churn) return { changes: 0, ms: 0 };
    clearInterval(churn.timer);
    const out = { changes: churn.changes, ms: performance.now() - churn.t0 };
    churn = undefined;
    return out;
  },
  objects: () => {
    const { store } = api.state();
    return [...store.services, ...store.endpointslices].map(([, o]) => o);
  },
  stats: () => ({ ...api.counts, openWatches: api.openWatches, rv: api.resourceVersion }),
  stop: async () => {
    await api.stop();
    setImmediate(() => process.exit(0));
  },
};

serveCommands(commands);
