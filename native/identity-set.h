// IdentitySet: the element identities a set element dump has seen (dump.cc's repeated-element check).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace nftlink {

// Exact set of byte strings (up to 64 KiB each) without an allocation per insert: the strings live
// back to back in one arena; the table holds (hash, offset) pairs, linear probing. Not
// std::unordered_set<std::string>: a node (and often a string) per element made a 200k-element dump
// measurably slower (docs/decisions.md).
class IdentitySet {
 public:
  void clear() {
    arena_.clear();
    std::fill(slots_.begin(), slots_.end(), 0);
    count_ = 0;
  }
  // False if `p[0..n)` was inserted before.
  bool insert(const uint8_t *p, size_t n) {
    if ((count_ + 1) * 4 > slots_.size() * 3) rehash(slots_.empty() ? 4096 : slots_.size() * 2);
    const uint64_t h = hash(p, n);
    const uint32_t tag = uint32_t(h >> 32) | 1;  // never 0: 0 marks an empty slot
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(h) & mask;; i = (i + 1) & mask) {
      const uint64_t s = slots_[i];
      if (s == 0) {
        const size_t off = arena_.size();
        if (off > UINT32_MAX - 65536) throw std::runtime_error("nftlink: too many set elements to check for repeats");
        arena_.push_back(uint8_t(n));
        arena_.push_back(uint8_t(n >> 8));
        arena_.insert(arena_.end(), p, p + n);
        slots_[i] = (uint64_t(tag) << 32) | uint32_t(off);
        count_++;
        return true;
      }
      if (uint32_t(s >> 32) == tag && same(uint32_t(s), p, n)) return false;
    }
  }

 private:
  static uint64_t hash(const uint8_t *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 29;
    }
    uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
  }
  bool same(uint32_t off, const uint8_t *p, size_t n) const {
    const size_t len = size_t(arena_[off]) | size_t(arena_[off + 1]) << 8;
    return len == n && std::memcmp(arena_.data() + off + 2, p, n) == 0;
  }
  void rehash(size_t size) {
    std::vector<uint64_t> old(size, 0);
    old.swap(slots_);
    const size_t mask = size - 1;
    for (uint64_t s : old) {
      if (s == 0) continue;
      const uint32_t off = uint32_t(s);
      const size_t len = size_t(arena_[off]) | size_t(arena_[off + 1]) << 8;
      size_t i = size_t(hash(arena_.data() + off + 2, len)) & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<uint8_t> arena_;
  std::vector<uint64_t> slots_;
  size_t count_ = 0;
};

}  // namespace nftlink
