// The library CNIs import: objects, expressions, builders, transactions, the client, rendering.

export * from './objects.js';
export * from './operations.js';
export * from './errors.js';
export type { MissingObject, RefusedObject } from './refusal-reason.js';
export { Transaction, type TransactionObject, type TransactionOptions } from './transaction.js';
export type { RequestSink } from './netlink/encode.js';
export { Nftables, type OpenOptions } from './client.js';
export type { CommitOptions, CommitResult, DumpOptions, NftConnection } from './connection.js';
export type * from './expr/index.js';
export { rule, RuleBuilder, type NatTarget, type NatMapTarget, type MatchValue } from './builder/rule-builder.js';
export { constant, ct, fibType, ip, ip6, meta, numgen, sctp, tcp, th, udp, type Field } from './builder/fields.js';
export * as types from './types/datatypes.js';
export type { Datatype, Scalar } from './types/datatypes.js';
export type { Verdict } from './types/verdict.js';
export { formatIPv4, formatIPv6, parseIPv4, parseIPv6, parsePrefix, type Prefix } from './types/address.js';
export { renderRuleset } from './render/ruleset.js';
export { renderCommands } from './render/commands.js';
export { renderRuleExprs, RenderError } from './render/rule.js';
export { FAMILY_BY_NUMBER, NF_IP_PRI } from './netlink/constants.js';
export { Reconciler, type DesiredState, type ReconcileStats } from './reconcile/reconciler.js';
export { ElementStore, type ElementDelta } from './reconcile/element-store.js';
export { sameChainBase, sameRule, sameRules } from './reconcile/rule-equality.js';
export { chainChange, knownChain, rulesByChain, type ChainChange, type KnownChain } from './reconcile/known-chain.js';
export { elementKey } from './values.js';
export { sameElement, samePayload } from './reconcile/element-equality.js';
