// The request encoder's public face (what transaction.ts, client.ts and native-sink.ts use); the
// encoder itself is in encode/: the request and its streaming (request-encoder.ts), one module
// per object kind, and the hot element writers.

export { encodeRequest, RequestEncoder, type EncodedRequest, type EncodeOptions, type RequestSink } from './encode/request-encoder.js';
export { streamsElements, type ElementRun } from './encode/elements.js';
export type { ElementInspector } from './encode/element-writer.js';
export { WireOrigins } from './encode/origins.js';
export { setFlags, setUdata } from './encode/set.js';
