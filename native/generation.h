// getGeneration: NFT_MSG_GETGEN, the ruleset generation counter (bumped by every committed batch).
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>

#include "socket.h"

namespace nftlink {

// Synchronous core (throws std::runtime_error); dump.cc brackets every dump with it.
uint32_t runGetGeneration(NlSocket &sock);

Napi::Promise startGetGeneration(Napi::Env env, std::shared_ptr<Handle> h);

}  // namespace nftlink
