// commit(h, buf): decode the compact request, let libnftnl build every message into one batch, send
// it in one sendmsg() and attribute every kernel error to its operation (and element).
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "socket.h"

namespace nftlink {

struct CommitError {
  int32_t op;       // -1: batch-level
  int32_t element;  // -1: not an element error
  int32_t err;      // positive errno
  std::string message;
  bool batch;       // phase 'batch' (answered on BATCH_BEGIN's sequence number) vs 'op'
};

// Synchronous core (exposed for the worker; throws WireError / std::runtime_error).
std::vector<CommitError> runCommit(NlSocket &sock, const std::vector<uint8_t> &request);

Napi::Promise startCommit(Napi::Env env, std::shared_ptr<Handle> h, std::vector<uint8_t> request);

}  // namespace nftlink
