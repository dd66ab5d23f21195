#include "socket.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <stdexcept>

namespace nftlink {

namespace {

std::string errnoText(int e) { return std::string(strerror(e)) + " (errno " + std::to_string(e) + ")"; }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string NetnsTarget::describe() const {
  switch (type) {
    case Current: return "the current network namespace";
    case Path: return "network namespace " + path;
    case Fd: return "network namespace fd " + std::to_string(fd);
  }
  return "?";
}

static mnl_socket *openBound(uint32_t *portid, std::string *err) {
  mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
  if (nl == nullptr) {
    *err = "socket(AF_NETLINK, NETLINK_NETFILTER) failed: " + errnoText(errno);
    return nullptr;
  }
  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
    *err = "bind of the netlink socket failed: " + errnoText(errno);
    mnl_socket_close(nl);
    return nullptr;
  }
  *portid = mnl_socket_get_portid(nl);
  return nl;
}

std::unique_ptr<NlSocket> NlSocket::open(const NetnsTarget &ns) {
  std::unique_ptr<NlSocket> s(new NlSocket());
  std::string err;
  if (ns.type == NetnsTarget::Current) {
    s->nl_ = openBound(&s->portid_, &err);
    if (s->nl_ == nullptr) throw std::runtime_error("nftlink: " + err);
  } else {
    Fd self, target;
    // The *thread's* namespace: setns() below changes only the calling thread.
    self.fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self.fd < 0)
      throw std::runtime_error("nftlink: cannot open /proc/thread-self/ns/net to come back after entering " +
                               ns.describe() + ": " + errnoText(errno));
    int tfd = ns.fd;
    if (ns.type == NetnsTarget::Path) {
      target.fd = ::open(ns.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (target.fd < 0)
        throw std::runtime_error("nftlink: cannot open " + ns.describe() + ": " + errnoText(errno));
      tfd = target.fd;
    }
    if (setns(tfd, CLONE_NEWNET) < 0) {
      const int e = errno;
      throw std::runtime_error("nftlink: cannot enter " + ns.describe() + ": " + errnoText(e) +
                               (e == EINVAL ? " (not a network namespace?)" : e == EPERM ? " (needs CAP_SYS_ADMIN)" : ""));
    }
    s->nl_ = openBound(&s->portid_, &err);
    if (setns(self.fd, CLONE_NEWNET) < 0) {
      // Practically impossible (we hold a reference to the namespace we came from), but if it happens
      // the thread would silently stay in the other namespace: say so loudly.
      const int e = errno;
      if (s->nl_) mnl_socket_close(s->nl_);
      s->nl_ = nullptr;
      throw std::runtime_error("nftlink: entered " + ns.describe() +
                               " but could not return to the original namespace: " + errnoText(e));
    }
    if (s->nl_ == nullptr) throw std::runtime_error("nftlink: in " + ns.describe() + ": " + err);
  }
  const int fd = mnl_socket_get_fd(s->nl_);
  int one = 1;
  // Extended ack (Linux 4.12+) gives the kernel's message and the offset of the offending attribute;
  // CAP_ACK (4.3+) stops the kernel from echoing our whole request in every error.
  if (setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one) < 0)
    throw std::runtime_error("nftlink: setsockopt(NETLINK_EXT_ACK) failed: " + errnoText(errno));
  if (setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one) < 0)
    throw std::runtime_error("nftlink: setsockopt(NETLINK_CAP_ACK) failed: " + errnoText(errno));
  // Dumps and GETGEN block in recv(); the kernel always answers them, but never hang a worker thread
  // forever on a wedged socket.
  struct timeval tv = {30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  s->seq_ = static_cast<uint32_t>(time(nullptr));
  return s;
}

NlSocket::~NlSocket() {
  if (nl_) mnl_socket_close(nl_);
}

int NlSocket::fd() const { return mnl_socket_get_fd(nl_); }

uint32_t NlSocket::takeSeq(uint32_t n) {
  const uint32_t first = seq_;
  seq_ += n;
  return first;
}

size_t NlSocket::growBuf(int forceOpt, int opt, size_t bytes, size_t *cache) {
  if (*cache >= bytes) return *cache;
  const int fd = mnl_socket_get_fd(nl_);
  // The kernel doubles the value it is given (for its own bookkeeping) and caps int overflow; ask for
  // what we need and read back what we got.
  const int want = bytes > size_t(INT_MAX / 2) ? INT_MAX / 2 : static_cast<int>(bytes);
  int cur = 0;
  socklen_t sl = sizeof cur;
  if (getsockopt(fd, SOL_SOCKET, opt, &cur, &sl) == 0 && cur >= 0 && size_t(cur) >= bytes) {
    *cache = size_t(cur);
    return *cache;
  }
  if (setsockopt(fd, SOL_SOCKET, forceOpt, &want, sizeof want) < 0)
    setsockopt(fd, SOL_SOCKET, opt, &want, sizeof want);  // capped by net.core.*mem_max
  sl = sizeof cur;
  if (getsockopt(fd, SOL_SOCKET, opt, &cur, &sl) == 0 && cur > 0) *cache = size_t(cur);
  return *cache;
}

size_t NlSocket::ensureSndBuf(size_t bytes) { return growBuf(SO_SNDBUFFORCE, SO_SNDBUF, bytes, &sndbuf_); }
size_t NlSocket::ensureRcvBuf(size_t bytes) { return growBuf(SO_RCVBUFFORCE, SO_RCVBUF, bytes, &rcvbuf_); }

void NlSocket::drainStale() {
  char buf[8192];
  const int fd = mnl_socket_get_fd(nl_);
  for (int i = 0; i < 1000000; i++) {
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOBUFS) continue;  // clears the pending overrun
    if (n <= 0) return;
  }
}

}  // namespace nftlink
