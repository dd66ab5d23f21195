// commit(h, buf): decode the compact request, let libnftnl build every message into one batch, send
// it in one sendmsg(), attribute every kernel error to its operation (and element), and collect the
// handles of the rules the kernel echoes back (echo.h).
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "echo.h"
#include "socket.h"

namespace nftlink {

struct CommitError {
  int32_t op;       // -1: batch-level
  int32_t element;  // -1: not an element error
  int32_t err;      // positive errno
  std::string message;
  bool batch;       // phase 'batch' (answered on BATCH_BEGIN's sequence number) vs 'op'
  // Where in the refused message the kernel pointed (NLMSGERR_ATTR_OFFS): per nesting level, the
  // attribute's type and its index among its siblings. Empty when the kernel pointed nowhere.
  std::vector<uint32_t> attrPath;
};

// What a commit resolves with: the kernel's errors (a refused batch) or, for a committed one, the
// handles of the rules sent with NLM_F_ECHO, in the order the kernel echoed them (batch order).
struct CommitResult {
  std::vector<CommitError> errors;
  std::vector<RuleHandle> handles;
};

// The request as the worker reads it: the caller's bytes in place (`ref` keeps the JS Uint8Array alive
// until the worker is destroyed, on the JS thread), or `copy` when the bytes could change under the
// worker (a SharedArrayBuffer). The caller must neither modify nor detach (transfer) a non-shared
// buffer until the promise settles; nftlink's TypeScript side never does.
struct CommitRequest {
  Napi::ObjectReference ref;
  std::vector<uint8_t> copy;
  const uint8_t *data = nullptr;
  size_t len = 0;
};

// JS thread: `arr`'s bytes as a worker reads them (a commit's request, or a streamed commit's part).
CommitRequest requestOf(const Napi::Uint8Array &arr);

class Batch;
class RequestReader;

// Turns a request's operations into one batch of netlink messages as they arrive (all at once for
// commit(), part by part for a streamed commit: commit-stream.h), then sends it. Not thread-safe:
// one thread at a time.
class BatchBuilder {
 public:
  // `capacity`: a first guess at the batch's size in bytes (it grows as needed).
  explicit BatchBuilder(size_t capacity);
  ~BatchBuilder();
  BatchBuilder(const BatchBuilder &) = delete;
  BatchBuilder &operator=(const BatchBuilder &) = delete;
  // Builds the messages of the next `count` operations `rd` reads; indices go on from the last call.
  // Throws WireError for a malformed operation (then nothing may be sent).
  void add(RequestReader &rd, uint32_t count);
  // BATCH_BEGIN (with NFNL_BATCH_GENID = genid when `flags` has kFlagGenid), the operations, and
  // BATCH_END unless kFlagCheck; one sendmsg(); every reply mapped to its operation. Once only.
  CommitResult send(NlSocket &sock, uint16_t flags, uint32_t genid);

 private:
  std::unique_ptr<Batch> b_;
  uint32_t ops_ = 0;
};

// Synchronous core (exposed for the worker; throws WireError / std::runtime_error).
CommitResult runCommit(NlSocket &sock, const uint8_t *request, size_t len);

// A commit's result as JavaScript sees it: { errors: [...], handles: [...] } (native/README.md).
Napi::Object commitResultToJs(Napi::Env env, const CommitResult &res);

Napi::Promise startCommit(Napi::Env env, std::shared_ptr<Handle> h, CommitRequest request);

}  // namespace nftlink
