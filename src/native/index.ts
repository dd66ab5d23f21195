// The addon's entry for code outside the library: the proxy's conntrack cleaner and localhost
// relays call the addon directly (they have no nft objects to build); src/nft goes through
// binding.ts itself.

export {
  loadNative,
  type NativeBinding,
  type NativeConntrackFilter,
  type NativeConntrackResult,
  type NativeHandle,
  type NativeRelayResult,
} from './binding.js';
