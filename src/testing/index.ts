/**
 * nftlink/testing: what a program's tests need to run its nftables code without a kernel.
 *
 * @packageDocumentation
 * @module nftlink/testing
 */

export { FakeNftables, type ErrnoName, type FakeOptions } from './fake-nftables.js';
