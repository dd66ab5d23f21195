// The compact format between TypeScript and the addon (specified in native/README.md): one buffer
// per transaction, one per dump, little-endian, no padding. What both directions share: the header's
// magic, version and flags, and the kinds of object. The writer is encode/wire-writer.ts, the
// reader decode/wire-reader.ts.

export const WIRE_MAGIC = 0x4c54464e; // "NFTL"
export const WIRE_VERSION = 1;
export const WIRE_FLAG_CHECK = 0x1;
export const WIRE_FLAG_GENID = 0x2;

export const enum WireKind {
  Table = 0,
  Chain = 1,
  Rule = 2,
  Set = 3,
  Elements = 4,
  // 5 is the monitor's NEWGEN (replies only).
  Object = 6,
  Flowtable = 7,
  /** Replies only: a set's element hashes, after its elements (the addon's dump flag 1024). */
  ElementHashes = 8,
}

/** The attribute of a kind-8 op (WireKind.ElementHashes) that holds the hashes: doubles, sorted, each once (native/wire.h kElementHashesAttr). */
export const ELEMENT_HASHES_ATTR = 2;
