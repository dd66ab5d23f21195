// dump / dumpSetElements / getGeneration: NLM_F_DUMP requests parsed by libnftnl and written back in
// the compact format, bracketed by GETGEN so the reply is one consistent generation.
#pragma once

#include <napi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "socket.h"

struct nlmsghdr;

namespace nftlink {

enum DumpWhat : uint32_t {
  kDumpTables = 1,
  kDumpChains = 2,
  kDumpSets = 4,
  kDumpElements = 8,
  kDumpRules = 16,
  kDumpAll = 31,
};

struct DumpSpec {
  uint32_t what = 0;
  uint8_t family = 0;  // NFPROTO_UNSPEC: every family
  bool hasTable = false;
  std::string table;
  bool hasChain = false;  // rules of one chain only (needs a table)
  std::string chain;
  bool oneSet = false;  // dumpSetElements: only `set`'s elements
  std::string set;
};

// Synchronous cores (throw std::runtime_error).
class Writer;
Writer runDump(NlSocket &sock, const DumpSpec &spec);
uint32_t runGetGeneration(NlSocket &sock);

Napi::Promise startDump(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec);
Napi::Promise startGetGeneration(Napi::Env env, std::shared_ptr<Handle> h);
// dumpSetElementsStream (spec.oneSet): onChunk(part, attempt) for each part; the promise resolves with
// { generation, attempt } after the last one.
Napi::Promise startDumpStream(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec, Napi::Function onChunk);

// Shared by dump.cc and generation.cc: one request, replies read until NLMSG_DONE / the error / (for a
// non-dump request) the first reply. Returns false if the kernel flagged the dump NLM_F_DUMP_INTR.
// `each` sees every data message; an exception it throws is rethrown after the stream is drained.
struct RequestResult {
  bool interrupted = false;
  int error = 0;  // positive errno from NLMSG_ERROR / NLMSG_DONE, 0 on success
};
RequestResult netlinkRequest(NlSocket &sock, const char *what, const nlmsghdr *req, bool dump,
                             const std::function<void(const nlmsghdr *)> &each);

}  // namespace nftlink
