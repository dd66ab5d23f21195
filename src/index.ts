/**
 * nftlink: nftables programmed from Node.js over netlink. The guide is docs/library.md; the
 * in-memory fake for unit tests is the `nftlink/testing` entry.
 *
 * @packageDocumentation
 * @module nftlink
 */
export * from './nft/index.js';
