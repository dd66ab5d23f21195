// One netlink request and its replies: the loop dump.cc, conntrack.cc and generation.cc share.
#pragma once

#include <functional>

#include "socket.h"

struct nlmsghdr;

namespace nftlink {

// Sends `req` and reads its replies until NLMSG_DONE, the kernel's error or (`dump` false) the first
// reply. `each` sees every data message; an exception it throws is rethrown after the replies are
// drained, so the socket stays in step. Throws std::runtime_error if sending or receiving fails.
struct RequestResult {
  bool interrupted = false;  // the kernel flagged the dump NLM_F_DUMP_INTR: the caller retries it
  int error = 0;  // positive errno from NLMSG_ERROR / NLMSG_DONE, 0 on success
};
RequestResult netlinkRequest(NlSocket &sock, const char *what, const nlmsghdr *req, bool dump,
                             const std::function<void(const nlmsghdr *)> &each);

}  // namespace nftlink
