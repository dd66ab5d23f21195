// dump / dumpSetElements: NLM_F_DUMP requests parsed by libnftnl and written back in the compact
// format, bracketed by GETGEN (generation.h) so the reply is one consistent generation.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "socket.h"

namespace nftlink {

enum DumpWhat : uint32_t {
  kDumpTables = 1,
  kDumpChains = 2,
  kDumpSets = 4,
  kDumpElements = 8,
  kDumpRules = 16,
  kDumpObjects = 32,
  kDumpFlowtables = 64,
  kDumpAll = 127,
  // With kDumpElements: leave out the elements of anonymous sets whose userdata carries nftlink's
  // elements digest (kElementsDigestUdata). Such a set is constant once its rule is committed
  // (the kernel refuses element changes to a bound anonymous set), so the digest stands for its
  // elements; dumping them is most of a restart's kernel time when a table has thousands.
  kDumpOmitDigestedElements = 128,
  // With kDumpChains and kDumpRules, for one table: the rules read with one request per chain. The
  // kernel resumes a dump of a table's rules by walking past every rule it sent before (quadratic
  // in the table's rules: seconds at 100k chains); given a chain, it finds that chain by name.
  kDumpRulesPerChain = 256,
  // With kDumpRules: leave out the expressions of rules whose userdata carries nftlink's
  // expressions digest (kRuleExprsDigestUdata), which the caller compares instead. Decoding every
  // rule's expressions is most of what a large table's dump costs the caller.
  kDumpOmitDigestedRuleExprs = 512,
  // With kDumpSets and kDumpElements: after each named, non-interval set's elements, a kind-8 op
  // with their hashes, sorted and each once (element-hash.h), or none when an element is declined.
  // The caller compares the set by them; hashing them here spares its thread the work.
  kDumpElementHashes = 1024,
  kDumpFlagsMax = 2047,
};

// The set userdata TLV type nftlink writes an anonymous set's elements digest under (16 bytes).
// nft ignores TLV types it does not know; its own set types end at 7.
constexpr uint8_t kElementsDigestUdata = 0xc8;
// The rule userdata TLV type nftlink writes a rule's expressions digest under (8 bytes).
constexpr uint8_t kRuleExprsDigestUdata = 0xc9;

struct DumpSpec {
  uint32_t what = 0;
  uint8_t family = 0;  // NFPROTO_UNSPEC: every family
  bool hasTable = false;
  std::string table;
  bool hasChain = false;  // rules of one chain only (needs a table)
  std::string chain;
  bool oneSet = false;  // dumpSetElements: only `set`'s elements
  std::string set;
  // Named sets of `table` whose elements are left out (their set op is still written). The kernel's
  // element dump resumes each message by walking past what it sent before: quadratic in a set's size.
  std::vector<std::string> omitElementsOf;
};

// Synchronous cores (throw std::runtime_error).
class Writer;
Writer runDump(NlSocket &sock, const DumpSpec &spec);

// Hands a finished reply to JS as the ArrayBuffer's own memory (no copy); leaves `w` empty.
Napi::Value toUint8Array(Napi::Env env, Writer &w);

Napi::Promise startDump(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec);
// dumpSetElementsStream (spec.oneSet): onChunk(part, attempt) for each part; the promise resolves with
// { generation, attempt } after the last one.
Napi::Promise startDumpStream(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec, Napi::Function onChunk);

}  // namespace nftlink
