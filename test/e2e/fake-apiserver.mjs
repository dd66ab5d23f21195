// The fake Kubernetes API server (test/helpers/fake-apiserver.mjs) as a child process, so that it
// can run inside a test network namespace (`ip netns exec NS node fake-apiserver.mjs PORT [STATE]`),
// next to the `nftlink proxy` process that talks to it. STATE: a file with what the `state`
// command returned from an earlier process (the objects, resourceVersions and event history
// outlive a restart: a test may change them "while it is down").
//
// Control: one JSON command per line on stdin, one JSON answer per line on stdout
// ({id, ok, result} or {id, ok: false, error}). The server does not listen until {op: "listen"}.
// Commands: listen, upsert {resource, obj}, remove {resource, namespace, name}, dropWatches (the
// connections break), endWatches (they end cleanly, as at timeoutSeconds), compact, failNext
// {resource, code, watch?, times?}, set {key, value} (refuseWatches, goneAsHttpStatus,
// pauseWatches, bookmarkMs, listDelayMs, watchDelayMs), stats, state, stop.

import { readFileSync } from 'node:fs';
import { FakeApiServer } from '../helpers/fake-apiserver.mjs';
import { serveCommands } from '../helpers/line-rpc-serve.mjs';

const [port, statePath] = [Number(process.argv[2]), process.argv[3]];
const api = new FakeApiServer(statePath ? JSON.parse(readFileSync(statePath, 'utf8')) : undefined);
const SETTINGS = ['refuseWatches', 'goneAsHttpStatus', 'pauseWatches', 'bookmarkMs', 'listDelayMs', 'watchDelayMs'];

const commands = {
  listen: () => api.start(port),
  upsert: (c) => api.upsert(c.resource, c.obj),
  remove: (c) => api.remove(c.resource, c.namespace, c.name),
  dropWatches: () => api.dropWatches(),
  endWatches: () => api.endWatches(),
  compact: () => api.compact(),
  failNext: (c) => api.failNext(c.resource, c.code, { watch: c.watch, times: c.times }),
  set: (c) => {
    if (!SETTINGS.includes(c.key)) throw new Error(`no setting ${c.key}`);
    api[c.key] = c.value;
  },
  stats: () => ({
    ...api.counts,
    openWatches: api.openWatches,
    rv: api.resourceVersion,
    requests: api.requests.slice(-200).map((r) => ({ ...r, query: r.query.toString(), authorization: r.authorization ?? '' })),
  }),
  state: () => api.state(),
  stop: async () => {
    await api.stop();
    setImmediate(() => process.exit(0));
  },
};

serveCommands(commands);
