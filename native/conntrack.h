// conntrackDelete: dump the conntrack table of the handle's namespace (ctnetlink, IPCTNL_MSG_CT_GET with
// NLM_F_DUMP, filtered by L3 family and, where the kernel supports CTA_FILTER, by protocol) and delete
// every flow that matches one of the given filters (IPCTNL_MSG_CT_DELETE with the flow's original tuple
// and id). One call per cleanup; the filters are parsed on the JS thread, the kernel work runs in a worker.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "socket.h"

namespace nftlink {

// A flow matches when its original tuple has this protocol and destination port, and (when given) this
// original destination address and this reply source address (for a DNAT'ed flow: the endpoint).
struct CtFilter {
  uint8_t protocol = 0;  // IPPROTO_UDP 17, IPPROTO_SCTP 132, IPPROTO_TCP 6
  uint16_t dstPort = 0;  // host order
  bool hasDst = false;
  uint8_t dst[16] = {};
  bool hasReplySrc = false;
  uint8_t replySrc[16] = {};
  bool notNatted = false;  // only flows whose reply source is the original destination (no DNAT)
};

struct CtSpec {
  uint8_t family = 0;  // NFPROTO_IPV4 2 / NFPROTO_IPV6 10
  std::vector<CtFilter> filters;
};

struct CtResult {
  uint32_t scanned = 0;   // flows of the filters' protocols the dump returned
  uint32_t deleted = 0;   // deletes the kernel acknowledged
  uint32_t vanished = 0;  // deletes answered ENOENT: the flow expired or was replaced meanwhile
  std::vector<int> errors;  // other errnos, one per failed delete (at most 64 kept)
  uint32_t failed = 0;      // every failed delete, including those not kept in `errors`
};

// Synchronous core (throws std::runtime_error).
CtResult runConntrackDelete(NlSocket &sock, const CtSpec &spec);

Napi::Promise startConntrackDelete(Napi::Env env, std::shared_ptr<Handle> h, CtSpec spec);

}  // namespace nftlink
