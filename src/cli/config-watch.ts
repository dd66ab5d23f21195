// kube-proxy exits when its --config file changes (cmd/kube-proxy/app/options.go: an fsnotify
// watch of the file), so that the kubelet restarts it with the new configuration. nftlink does the
// same, by content: a ConfigMap volume is updated by swapping a symlinked directory, which an
// inotify watch of the old file can miss (kube-proxy's handler only acts on Write and Rename), so
// the path is polled with stat (which follows the symlinks) and re-read when its identity or
// mtime changes; only different bytes count as a change.

import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';

/** How often the file's stat is polled: a ConfigMap update takes the kubelet longer than this to land. */
export const CONFIG_POLL_MS = 2000;

/** Calls `changed` once when the file's content stops being `loaded`; returns the stop function. */
export function watchConfigFile(path: string, loaded: string, changed: () => void, intervalMs = CONFIG_POLL_MS): () => void {
  let done = false;
  const listener = (now: Stats, before: Stats): void => {
    if (done || (now.ino === before.ino && now.mtimeMs === before.mtimeMs && now.size === before.size)) return;
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      // Gone for the moment (mid-swap) or for good: a change either way.
    }
    if (text === loaded) return;
    done = true;
    unwatchFile(path, listener);
    changed();
  };
  watchFile(path, { interval: intervalMs, persistent: false }, listener);
  return () => {
    done = true;
    unwatchFile(path, listener);
  };
}
