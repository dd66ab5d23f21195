// The compact transaction format (see native/README.md): a bounds-checked reader that turns a request
// buffer into views (pointers into the caller's copy of the buffer), a writer for dump replies, and the
// per-kind attribute tables that stand between untrusted bytes and libnftnl.
//
// Why the tables exist: libnftnl 1.2.4's object setters call exit() (nftnl_assert) on an attribute id
// past the kind's maximum or on a fixed-size attribute of the wrong length, its expression setters
// memcpy sizeof(field) bytes from whatever pointer they are given without looking at the length, and
// its data registers are 64-byte arrays filled with memcpy(data_len). Every attribute is therefore
// checked here, against libnftnl's own field sizes, before any libnftnl call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nftlink: the compact format is little-endian and the addon reads it in place; big-endian hosts are not supported"
#endif

namespace nftlink {

constexpr uint32_t kMagic = 0x4C54464E;  // "NFTL" read as a little-endian u32
constexpr uint16_t kVersion = 1;
constexpr size_t kHeaderSize = 16;

constexpr uint16_t kFlagCheck = 1u << 0;
constexpr uint16_t kFlagGenid = 1u << 1;

enum Kind : uint8_t { kTable = 0, kChain = 1, kRule = 2, kSet = 3, kElements = 4 };

// NFT_MSG_* numbers. The DESTROY* verbs (kernel 6.3+) are spelled out because bookworm's UAPI
// headers (linux-libc-dev 6.1) predate them.
enum MsgType : uint8_t {
  kNewTable = 0, kDelTable = 2, kNewChain = 3, kDelChain = 5, kNewRule = 6, kDelRule = 8,
  kNewSet = 9, kDelSet = 11, kNewSetElem = 12, kDelSetElem = 14,
  kDestroyTable = 26, kDestroyChain = 27, kDestroyRule = 28, kDestroySet = 29, kDestroySetElem = 30,
};

// NFT_DATA_VALUE_MAXLEN: the size of libnftnl's union nftnl_data_reg value array.
constexpr uint32_t kDataMax = 64;
// NFT_NAME_MAXLEN (including the NUL); also NFT_USERDATA_MAXLEN.
constexpr uint32_t kStrMax = 256;
constexpr uint32_t kUserDataMax = 256;
// libnftnl's struct nftnl_set desc.field_len[NFT_REG32_COUNT]; its setter scans for a terminating
// zero, so at most NFT_REG32_COUNT - 1 = 15 non-zero lengths are safe.
constexpr uint32_t kConcatMax = 15;
// Chain NFTNL_CHAIN_DEVICES: how many device names we accept (the kernel's own limit is lower in
// practice; this only bounds our allocation).
constexpr uint32_t kDevicesMax = 256;
// One element's netlink encoding must fit, with room to spare, in a NFTA_SET_ELEM_LIST_ELEMENTS nest
// whose length is a u16.
constexpr size_t kElemBoundMax = 32768;

enum class AttrKind : uint8_t {
  None,      // id not defined in libnftnl 1.2.4 (or defined but the setter rejects it)
  U8, U16, U32, U64,
  Str,       // NUL-terminated, <= kStrMax, no interior NUL
  Data,      // 1..kDataMax bytes (memcpy'd into a 64-byte data register)
  UserData,  // 0..kUserDataMax bytes (malloc'd copy)
  Concat,    // NFTNL_SET_DESC_CONCAT: 1..15 non-zero field lengths, one byte each
  Devices,   // NFTNL_CHAIN_DEVICES: a sequence of NUL-terminated names (libnftnl takes a char**)
  Pointer,   // libnftnl takes a pointer to one of its own objects: refused; use the expression lists
  Opaque,    // dump only: arbitrary bytes (xtables match/target info)
};

struct AttrSpec {
  const char *name;
  AttrKind kind;
};

struct ObjectSpec {
  const char *name;
  const AttrSpec *attrs;
  uint16_t count;  // ids 0..count-1
};

struct ExprSpec {
  const char *name;
  const AttrSpec *attrs;  // indexed by id; attrs[0] is NFTNL_EXPR_NAME (never settable)
  uint16_t count;
  bool commit;            // may appear in a request
  bool children;          // nested expression list allowed (dynset)
};

const ObjectSpec &objectSpec(Kind k);
const ObjectSpec &elemSpec();
const ExprSpec *findExpr(std::string_view name);
const char *attrKindName(AttrKind k);

// ---- request views -----------------------------------------------------------------------------

struct AttrView {
  uint16_t id;
  uint32_t len;
  const uint8_t *data;
  AttrKind kind;
  size_t offset;  // of the attribute header, for error messages
};

struct ExprView {
  const ExprSpec *spec;
  std::vector<AttrView> attrs;
  std::vector<ExprView> children;
  size_t offset;
};

struct ElemView {
  std::vector<AttrView> attrs;
  std::vector<ExprView> exprs;
  size_t bound;  // upper bound of its netlink encoding
};

struct OpView {
  uint8_t msgType;
  uint8_t kind;
  uint16_t nlFlags;
  uint8_t family;
  std::vector<AttrView> attrs;
  std::vector<ExprView> exprs;
  std::vector<ElemView> elems;
  size_t offset;
  size_t bound;  // upper bound of the netlink message (not used for kind 4, which is chunked)
};

struct Request {
  uint16_t flags = 0;
  uint32_t genid = 0;
  std::vector<OpView> ops;
};

// Thrown for every malformed request; what() is the full, user-facing message.
class WireError : public std::runtime_error {
 public:
  WireError(size_t offset, const std::string &reason);
};

// Parses and validates the whole buffer (nothing is sent for a malformed one).
Request parseRequest(const uint8_t *buf, size_t len);

// ---- reply writer ------------------------------------------------------------------------------

class Writer {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u16(uint16_t v) { raw(&v, 2); }
  void u32(uint32_t v) { raw(&v, 4); }
  void raw(const void *p, size_t n);
  size_t size() const { return buf_.size(); }
  void patchU16(size_t at, uint16_t v);
  void patchU32(size_t at, uint32_t v);
  void attr(uint16_t id, const void *data, uint32_t len);
  std::vector<uint8_t> &buffer() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

}  // namespace nftlink
