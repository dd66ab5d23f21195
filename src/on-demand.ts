// Modules the proxy needs on some paths only, loaded on their first use rather than at start-up,
// where they were a third of the time a small `proxy --once` took before it read its first manifest:
// - yaml (about 70 modules): read only for YAML manifests, a --config file and /configz; JSON
//   manifests and flags never need it.
// - node:http and node:https: for the servers and the API client. They are loaded with require,
//   not import: an ESM import of a built-in reads every one of its exports, and node:http's include
//   lazy web globals whose first read loads the fetch implementation (undici) and HTTP/2 (Node 24).

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let yamlModule: typeof import('yaml') | undefined;
let httpModule: typeof import('node:http') | undefined;
let httpsModule: typeof import('node:https') | undefined;

/** The yaml package. */
export function yaml(): typeof import('yaml') {
  return (yamlModule ??= require('yaml') as typeof import('yaml'));
}

/** node:http. */
export function http(): typeof import('node:http') {
  return (httpModule ??= require('node:http') as typeof import('node:http'));
}

/** node:https. */
export function https(): typeof import('node:https') {
  return (httpsModule ??= require('node:https') as typeof import('node:https'));
}
