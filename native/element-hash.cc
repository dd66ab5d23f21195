#include "element-hash.h"

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace nftlink {

namespace {

constexpr uint32_t kC1 = 0xcc9e2d51;
constexpr uint32_t kC2 = 0x1b873593;

inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

inline uint32_t mix(uint32_t h, uint32_t k) {
  k *= kC1;
  k = rotl(k, 15);
  k *= kC2;
  h ^= k;
  h = rotl(h, 13);
  return h * 5 + 0xe6546b64;
}

inline uint32_t finish(uint32_t h, uint32_t length) {
  h ^= length;
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

// The element-comment TLV of an element's userdata (src/nft/netlink/attrs.ts UDATA.SET_ELEM_COMMENT).
constexpr uint8_t kElemCommentUdata = 0;

// The verdict kinds TypeScript names (types/verdict.ts); nullptr for a code it refuses (break, a
// queue or an unknown code), which TypeScript's decoder then reports.
const char *verdictKind(uint32_t code) {
  switch (int32_t(code)) {
    case NF_DROP:
      return "drop";
    case NF_ACCEPT:
      return "accept";
    case NFT_CONTINUE:
      return "continue";
    case NFT_JUMP:
      return "jump";
    case NFT_GOTO:
      return "goto";
    case NFT_RETURN:
      return "return";
    default:
      return nullptr;
  }
}

const void *attr(nftnl_set_elem *e, uint16_t id, uint32_t *len) {
  *len = 0;
  return nftnl_set_elem_is_set(e, id) ? nftnl_set_elem_get(e, id, len) : nullptr;
}

}  // namespace

double hashBytes(const uint8_t *bytes, size_t len) {
  uint32_t a = 0x9747b28c;
  uint32_t b = 0x5bd1e995;
  size_t i = 0;
  for (; i + 4 <= len; i += 4) {
    const uint32_t k = uint32_t(bytes[i]) | uint32_t(bytes[i + 1]) << 8 | uint32_t(bytes[i + 2]) << 16 |
                       uint32_t(bytes[i + 3]) << 24;
    a = mix(a, k);
    b = mix(b, k);
  }
  if (i < len) {
    uint32_t k = 0;
    for (int s = 0; i < len; i++, s += 8) k |= uint32_t(bytes[i]) << s;
    a = mix(a, k);
    b = mix(b, k);
  }
  const uint32_t n = uint32_t(len);
  return double(finish(a, n)) * 2097152.0 + double(finish(b, n) >> 11);
}

void sortDistinct(std::vector<double> &hashes) {
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
}

void ElementHasher::bytes(const void *p, uint32_t len) {
  const auto *b = static_cast<const uint8_t *>(p);
  buf_.insert(buf_.end(), b, b + len);
}

bool ElementHasher::text(const char *s, uint32_t len) {
  buf_.push_back(0xff);
  buf_.push_back(uint8_t(len & 0xff));
  buf_.push_back(uint8_t((len >> 8) & 0xff));
  buf_.push_back(0xfe);
  for (uint32_t i = 0; i < len; i++) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x80) return false;
    buf_.push_back(c);
    buf_.push_back(0);
  }
  return true;
}

bool ElementHasher::add(nftnl_set_elem *e, const SetShape &shape, std::vector<double> &out) {
  buf_.clear();
  uint32_t len = 0;
  if (attr(e, NFTNL_SET_ELEM_OBJREF, &len)) return false;
  uint32_t keyLen = 0;
  const void *key = attr(e, NFTNL_SET_ELEM_KEY, &keyLen);
  uint32_t endLen = 0;
  const void *keyEnd = attr(e, NFTNL_SET_ELEM_KEY_END, &endLen);
  // A range: a key end other than the key (TypeScript's isRange; a missing key compares as empty).
  if (keyEnd && (endLen != keyLen || (keyLen && std::memcmp(keyEnd, key, keyLen) != 0))) return false;
  if (key) bytes(key, keyLen);
  if (shape.verdictMap) {
    if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_VERDICT)) {
      const char *kind = verdictKind(nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_VERDICT));
      if (!kind) return false;
      const bool toChain = std::strcmp(kind, "jump") == 0 || std::strcmp(kind, "goto") == 0;
      const char *chain = toChain ? static_cast<const char *>(attr(e, NFTNL_SET_ELEM_CHAIN, &len)) : "";
      if (!chain) return false;  // a jump without a chain: TypeScript refuses it
      if (!text(kind, uint32_t(std::strlen(kind))) || !text(chain, uint32_t(strnlen(chain, toChain ? len : 0))))
        return false;
    }
  } else if (shape.map) {
    const void *data = attr(e, NFTNL_SET_ELEM_DATA, &len);
    if (data) bytes(data, len);
  }
  uint32_t udLen = 0;
  if (const auto *ud = static_cast<const uint8_t *>(attr(e, NFTNL_SET_ELEM_USERDATA, &udLen))) {
    // The last comment TLV (TypeScript's parseUdata keeps the last of a type), up to its first NUL.
    const uint8_t *comment = nullptr;
    uint32_t commentLen = 0;
    for (uint32_t i = 0; i + 2 <= udLen && i + 2 + ud[i + 1] <= udLen; i += 2 + ud[i + 1])
      if (ud[i] == kElemCommentUdata) comment = ud + i + 2, commentLen = ud[i + 1];
    if (comment) {
      const auto *s = reinterpret_cast<const char *>(comment);
      if (!text(s, uint32_t(strnlen(s, commentLen)))) return false;
    }
  }
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT)) {
    // TypeScript writes String(Number(timeout)): exact, and plain digits, below 2^53.
    const uint64_t timeout = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
    if (timeout >= (uint64_t(1) << 53)) return false;
    const std::string digits = std::to_string(timeout);
    if (!text(digits.data(), uint32_t(digits.size()))) return false;
  }
  out.push_back(hashBytes(buf_.data(), buf_.size()));
  return true;
}

}  // namespace nftlink
