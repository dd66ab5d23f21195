// A dumped set's elements as numbers (dump.h, kDumpElementHashes): each element's 53-bit hash, the
// same number src/nft/element-hash.ts gives it in TypeScript, so that a restart compares a set with
// what it means to write without decoding the set's elements on the JavaScript thread. The pieces
// and their order are that file's: the key's bytes; a verdict map's verdict kind and chain as text,
// or a map's data bytes; the comment as text; the timeout as decimal text. Text is length-framed
// UTF-16, which for ASCII is each byte followed by a zero; an element with other text is declined
// (the caller hashes the set in TypeScript then), as is one TypeScript would not hash (a range, an
// object reference). test/nft/native-element-hashes.kernel.test.ts holds the two to the same numbers.
#pragma once

#include <libnftnl/set.h>

#include <cstdint>
#include <vector>

namespace nftlink {

// What of a set's declaration decides how its elements hash (src/nft/netlink/decode/set.ts: a map
// has data; its data type NFT_DATA_VERDICT makes it a verdict map).
struct SetShape {
  bool map = false;
  bool verdictMap = false;
};

class ElementHasher {
 public:
  // Appends the element's hash to `out`; false (nothing appended) when it is declined.
  bool add(nftnl_set_elem *e, const SetShape &shape, std::vector<double> &out);

 private:
  void bytes(const void *p, uint32_t len);
  // TypeScript's putText for ASCII text (false for any other byte).
  bool text(const char *s, uint32_t len);
  std::vector<uint8_t> buf_;
};

// byte-hash.ts's hashBytes: two murmur3 lanes folded into an exact double below 2^53.
double hashBytes(const uint8_t *bytes, size_t len);

// element-hash.ts's sortedDistinct: ascending, each once.
void sortDistinct(std::vector<double> &hashes);

}  // namespace nftlink
