// The decoder's public face (what client.ts and transaction.ts use); the decoder itself is in
// decode/: the compact format's reader (wire-reader.ts) and attribute values (attr-values.ts), one
// module per object kind, the elements (elements.ts, interval-elements.ts), the ruleset assembled
// from a dump (ruleset-decoder.ts) and one set's elements (set-elements-dump.ts).

export { decodeRuleset, RulesetDecoder } from './decode/ruleset-decoder.js';
export { SetElementsDump } from './decode/set-elements-dump.js';
export { decodeRequestElements } from './decode/elements.js';
export { decodeRequestOperation } from './decode/request.js';
