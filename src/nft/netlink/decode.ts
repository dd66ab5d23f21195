// The decoder's public face (what client.ts and transaction.ts use); the decoder itself is in
// decode/: the compact format's reader (wire-reader.ts) and attribute values (attr-values.ts), one
// module per object kind, the elements (elements.ts), and the ruleset assembled from a dump
// (ruleset-decoder.ts).

export { decodeRuleset, decodeSetElements, RulesetDecoder } from './decode/ruleset-decoder.js';
export { decodeRequestElements } from './decode/elements.js';
export { decodeRequestOperation } from './decode/request.js';
