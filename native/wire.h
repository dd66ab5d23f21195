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
#include <cstdlib>
#include <cstring>
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

// Kind 5 is the monitor's NFT_MSG_NEWGEN (replies only), so named objects and flowtables come after it.
enum Kind : uint8_t { kTable = 0, kChain = 1, kRule = 2, kSet = 3, kElements = 4, kObject = 6, kFlowtable = 7, kElementHashes = 8 };
// The attribute of a kind-8 op that holds its set's element hashes (src/nft/netlink/wire-format.ts).
constexpr uint16_t kElementHashesAttr = 2;
constexpr uint8_t kKindMax = kFlowtable;

// NFT_MSG_* numbers. The DESTROY* verbs (kernel 6.3+) are spelled out because bookworm's UAPI
// headers (linux-libc-dev 6.1) predate them.
enum MsgType : uint8_t {
  kNewTable = 0, kDelTable = 2, kNewChain = 3, kDelChain = 5, kNewRule = 6, kDelRule = 8,
  kNewSet = 9, kDelSet = 11, kNewSetElem = 12, kDelSetElem = 14,
  kNewObj = 18, kDelObj = 20, kNewFlowtable = 22, kDelFlowtable = 24,
  kDestroyTable = 26, kDestroyChain = 27, kDestroyRule = 28, kDestroySet = 29, kDestroySetElem = 30,
  kDestroyObj = 31, kDestroyFlowtable = 32,
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
// xtables compat (match/target): the extension's name goes into a char[XT_EXTENSION_MAXNAMELEN] (29,
// with its NUL) that libnftnl 1.2.4 fills with snprintf, truncating silently; the info is the
// extension's kernel struct, as long as one netlink attribute holds (the rule's expression list
// still has to fit its own 65535-byte nest).
constexpr uint32_t kXtNameMax = 29;
constexpr uint32_t kXtInfoMax = 65531;
// A netlink attribute's length is a u16: no nest (a rule's expression list) may exceed it.
constexpr size_t kNestMax = 65535;

enum class AttrKind : uint8_t {
  None,      // id not defined in libnftnl 1.2.4 (or defined but the setter rejects it)
  U8, U16, U32, U64,
  Str,       // NUL-terminated, <= kStrMax, no interior NUL
  Data,      // 1..kDataMax bytes (memcpy'd into a 64-byte data register)
  UserData,  // 0..kUserDataMax bytes (malloc'd copy)
  Concat,    // NFTNL_SET_DESC_CONCAT: 1..15 non-zero field lengths, one byte each
  Devices,   // NFTNL_CHAIN_DEVICES: a sequence of NUL-terminated names (libnftnl takes a char**)
  Pointer,   // libnftnl takes a pointer to one of its own objects: refused; use the expression lists
  XtInfo,    // xtables match/target info: 1..kXtInfoMax opaque bytes (libnftnl keeps a malloc'd copy)
  ObjTyped,  // NFTNL_OBJ_BASE and up: its meaning depends on the object's type (objTypeSpec)
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
// The attributes from NFTNL_OBJ_BASE (16) on of a named object of `type` (NFT_OBJECT_*): attrs[0]
// is id 16. Null for a type nftlink does not send (connlimit, tunnel) or does not know.
const ObjectSpec *objTypeSpec(uint32_t type);
constexpr uint16_t kObjBase = 16;
const ExprSpec *findExpr(std::string_view name);
const char *attrKindName(AttrKind k);

// ---- request views -----------------------------------------------------------------------------
//
// Views point into the caller's request buffer: it must stay alive and unchanged while a request is
// read (commit keeps a reference to the JS Uint8Array for the worker's lifetime; see commit.cc).

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

// NFTNL_SET_ELEM_* ids 0..11, each at most once: an element never has more attributes than this.
constexpr uint16_t kElemAttrMax = 12;

// One element of a kind-4 list, read in place. Reused from element to element: reading the next one
// overwrites it (its expression vector keeps its capacity), so a list costs no allocation per element.
struct ElemView {
  AttrView attrs[kElemAttrMax];
  uint16_t attrCount = 0;
  std::vector<ExprView> exprs;  // per-element expressions (counter ...), usually none
  size_t offset = 0;
  size_t bound = 0;  // upper bound of its netlink encoding
};

struct OpView {
  uint8_t msgType;
  uint8_t kind;
  uint16_t nlFlags;
  uint8_t family;
  std::vector<AttrView> attrs;
  std::vector<ExprView> exprs;
  uint32_t elemCount = 0;  // kind 4: the elements follow, read one by one with RequestReader::nextElem
  size_t offset;
  size_t bound;  // upper bound of the netlink message (not used for kind 4, which is chunked)
};

// Thrown for every malformed request; what() is the full, user-facing message.
class WireError : public std::runtime_error {
 public:
  WireError(size_t offset, const std::string &reason);
};

// Bounds-checked cursor over the request (every read names what it was reading when it ran out).
// `base`: where `p` sits in the whole request (a streamed commit's part starts after the parts
// before it), so that pos() and every error name the byte as in the whole request.
class Reader {
 public:
  Reader(const uint8_t *p, size_t n, size_t base = 0) : p_(p), n_(n), base_(base) {}
  size_t pos() const { return base_ + pos_; }
  size_t remaining() const { return n_ - pos_; }
  const uint8_t *here() const { return p_ + pos_; }
  void need(size_t k, const char *what) const {
    if (k > n_ - pos_) fail(k, what);
  }
  uint8_t u8(const char *what) {
    need(1, what);
    return p_[pos_++];
  }
  uint16_t u16(const char *what) {
    need(2, what);
    uint16_t v;
    std::memcpy(&v, p_ + pos_, 2);
    pos_ += 2;
    return v;
  }
  uint32_t u32(const char *what) {
    need(4, what);
    uint32_t v;
    std::memcpy(&v, p_ + pos_, 4);
    pos_ += 4;
    return v;
  }
  const uint8_t *bytes(size_t k, const char *what) {
    need(k, what);
    const uint8_t *r = p_ + pos_;
    pos_ += k;
    return r;
  }

 private:
  [[noreturn]] void fail(size_t k, const char *what) const;
  const uint8_t *p_;
  size_t n_;
  size_t base_;
  size_t pos_ = 0;
};

// Reads and validates a request front to back, one operation (and, for kind 4, one element) at a
// time, so that the caller can build each message as soon as its part of the buffer is checked:
//
//   RequestReader r(buf, len);             // the header
//   for (i < r.count()) {
//     r.nextOp(op);
//     for (k < op.elemCount) r.nextElem(op, k, elem);   // kind 4 only
//   }
//   r.finish();                            // no trailing bytes
//
// Every check (and every error message) is the one the contract lists; nothing is sent unless the
// whole buffer was read without a WireError.
//
// A streamed commit reads its request in parts: headerless runs of whole operations, each read by
// a RequestReader made with part(), its operations numbered on from the parts before it.
class RequestReader {
 public:
  RequestReader(const uint8_t *buf, size_t len);
  // `count` operations and nothing else; the first is operation `firstOp`, at byte `base` of the
  // request the parts make up.
  static RequestReader part(const uint8_t *buf, size_t len, size_t base, uint32_t firstOp, uint32_t count);
  uint16_t flags() const { return flags_; }
  uint32_t genid() const { return genid_; }
  uint32_t count() const { return count_; }
  void nextOp(OpView &op);
  void nextElem(const OpView &op, uint32_t index, ElemView &e);
  void finish() const;

 private:
  RequestReader(const uint8_t *buf, size_t len, size_t base, uint32_t firstOp, uint32_t count)
      : r_(buf, len, base), count_(count), opIndex_(firstOp) {}
  Reader r_;
  uint16_t flags_ = 0;
  uint32_t genid_ = 0;
  uint32_t count_ = 0;
  uint32_t opIndex_ = 0;
};

// ---- reply writer ------------------------------------------------------------------------------

// A growable byte buffer for replies: malloc'd, grown with realloc, never zero-filled, and handed to
// JS as the ArrayBuffer's own memory (release()) instead of being copied.
class Writer {
 public:
  Writer() = default;
  explicit Writer(size_t capacity) { grow(capacity); }
  ~Writer() { std::free(buf_); }
  Writer(Writer &&o) noexcept : buf_(o.buf_), len_(o.len_), cap_(o.cap_) { o.buf_ = nullptr, o.len_ = o.cap_ = 0; }
  Writer &operator=(Writer &&o) noexcept {
    if (this != &o) {
      std::free(buf_);
      buf_ = o.buf_, len_ = o.len_, cap_ = o.cap_;
      o.buf_ = nullptr, o.len_ = o.cap_ = 0;
    }
    return *this;
  }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  void u8(uint8_t v) {
    ensure(1);
    buf_[len_++] = v;
  }
  void u16(uint16_t v) { raw(&v, 2); }
  void u32(uint32_t v) { raw(&v, 4); }
  void raw(const void *p, size_t n) {
    ensure(n);
    if (n) std::memcpy(buf_ + len_, p, n);
    len_ += n;
  }
  size_t size() const { return len_; }
  const uint8_t *data() const { return buf_; }
  void patchU16(size_t at, uint16_t v) { std::memcpy(buf_ + at, &v, 2); }
  void patchU32(size_t at, uint32_t v) { std::memcpy(buf_ + at, &v, 4); }
  void attr(uint16_t id, const void *data, uint32_t len) {
    ensure(6 + size_t(len));
    std::memcpy(buf_ + len_, &id, 2);
    std::memcpy(buf_ + len_ + 2, &len, 4);
    if (len) std::memcpy(buf_ + len_ + 6, data, len);
    len_ += 6 + size_t(len);
  }
  void clear() { len_ = 0; }
  // Hands the buffer (malloc'd; free() it) to the caller and leaves the writer empty.
  uint8_t *release(size_t *len) {
    uint8_t *p = buf_;
    *len = len_;
    buf_ = nullptr, len_ = cap_ = 0;
    return p;
  }

 private:
  void ensure(size_t n) {
    if (cap_ - len_ < n) grow(len_ + n > 2 * cap_ ? len_ + n : 2 * cap_);
  }
  void grow(size_t want);
  uint8_t *buf_ = nullptr;
  size_t len_ = 0;
  size_t cap_ = 0;
};

}  // namespace nftlink
