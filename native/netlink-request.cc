// netlinkRequest: one request on the netfilter socket, its replies read and dispatched until the
// reply ends, with the kernel's errors and dump interruptions reported (dump.cc, conntrack.cc and
// generation.cc send theirs through it).
#include "netlink-request.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nftlink {

namespace {

// Is this datagram the end of request `seq`'s dump reply? The same tests netlinkRequest applies to
// each message (NLMSG_DONE, or an NLMSG_ERROR that is not an ACK).
bool endsDump(const uint8_t *buf, ssize_t n, uint32_t seq, uint32_t portid) {
  int len = int(n);
  for (auto *nlh = reinterpret_cast<const nlmsghdr *>(buf); mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
    if (nlh->nlmsg_seq != seq || (nlh->nlmsg_pid != 0 && nlh->nlmsg_pid != portid)) continue;
    if (nlh->nlmsg_type == NLMSG_DONE) return true;
    if (nlh->nlmsg_type == NLMSG_ERROR) {
      if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr)) return true;
      if (static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh))->error != 0) return true;
    }
  }
  return false;
}

// Reads a long dump's datagrams on a thread of its own. The kernel builds each next part of a dump
// inside the recvmsg() that takes the previous one, so while this thread sits in the kernel the
// caller's thread parses what has arrived: for a large set the kernel's walk and libnftnl's parsing
// no longer add up (docs/decisions.md). The thread stops after the datagram that ends the reply (or a
// receive error); if the caller gives up early, it still reads to the end, discarding, so the socket
// stays in step.
class Receiver {
 public:
  Receiver(NlSocket &sock, uint32_t seq) : sock_(sock), seq_(seq), thread_([this] { loop(); }) {}
  ~Receiver() {
    {
      std::lock_guard<std::mutex> l(mu_);
      abandoned_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Receiver(const Receiver &) = delete;
  Receiver &operator=(const Receiver &) = delete;

  // The next datagram, swapped into `buf` (whose old storage goes back to the pool). Returns its
  // length, or -1 with *err set, as mnl_socket_recvfrom would.
  ssize_t next(std::vector<uint8_t> &buf, int *err) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !queue_.empty(); });
    Datagram d = std::move(queue_.front());
    queue_.pop_front();
    buf.swap(d.buf);
    if (!d.buf.empty()) pool_.push_back(std::move(d.buf));
    l.unlock();
    cv_.notify_all();
    *err = d.err;
    return d.n;
  }

 private:
  static constexpr size_t kMaxQueued = 64;  // 64 x 64 KiB at most waiting for the parser
  struct Datagram {
    std::vector<uint8_t> buf;
    ssize_t n;
    int err;
  };

  void loop() {
    for (;;) {
      std::vector<uint8_t> b;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return abandoned_ || queue_.size() < kMaxQueued; });
        if (!pool_.empty()) {
          b = std::move(pool_.back());
          pool_.pop_back();
        }
      }
      if (b.size() != 65536) b.assign(65536, 0);
      ssize_t n;
      int e = 0;
      do {
        n = mnl_socket_recvfrom(sock_.mnl(), b.data(), b.size());
        e = n < 0 ? errno : 0;
      } while (n < 0 && e == EINTR);
      const bool last = n < 0 || endsDump(b.data(), n, seq_, sock_.portid());
      {
        std::lock_guard<std::mutex> l(mu_);
        if (!abandoned_) queue_.push_back({std::move(b), n, e});
      }
      cv_.notify_all();
      if (last) return;
    }
  }

  NlSocket &sock_;
  const uint32_t seq_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Datagram> queue_;
  std::vector<std::vector<uint8_t>> pool_;
  bool abandoned_ = false;
  std::thread thread_;  // last: starts once everything above is initialised
};

// A dump still going after this many datagrams gets a Receiver thread (short dumps, e.g. one per set
// in a ruleset with 10k sets, never pay for a thread).
constexpr int kReceiverAfter = 4;

}  // namespace

// Not mnl_cb_run(): it returns at the first NLM_F_DUMP_INTR message and would leave the rest of the
// dump queued on the socket. We need to read every dump to its NLMSG_DONE to keep the stream in step,
// and merely note the interruption (the caller retries the whole dump).
RequestResult netlinkRequest(NlSocket &sock, const char *what, const nlmsghdr *req, bool dump,
                             const std::function<void(const nlmsghdr *)> &each) {
  const uint32_t seq = req->nlmsg_seq;
  if (mnl_socket_sendto(sock.mnl(), req, req->nlmsg_len) < 0)
    throw std::runtime_error(std::string("nftlink: sending the ") + what + " request failed: " + strerror(errno));
  // Dump skbs are at most 32 KiB (netlink caps its allocation there); 64 KiB leaves room for one
  // oversized message, and MSG_TRUNC (ENOSPC from libmnl) catches anything larger.
  std::vector<uint8_t> rb(65536);
  RequestResult res;
  std::exception_ptr failure;
  std::unique_ptr<Receiver> rx;
  for (int datagrams = 0;; datagrams++) {
    if (dump && !rx && datagrams == kReceiverAfter) rx.reset(new Receiver(sock, seq));
    ssize_t n;
    int e = 0;
    if (rx) {
      n = rx->next(rb, &e);
    } else {
      n = mnl_socket_recvfrom(sock.mnl(), rb.data(), rb.size());
      e = n < 0 ? errno : 0;
    }
    if (n < 0) {
      if (e == EINTR) continue;
      if (e == EAGAIN || e == EWOULDBLOCK)
        throw std::runtime_error(std::string("nftlink: no reply to the ") + what + " request within 30 s");
      if (e == ENOSPC)
        throw std::runtime_error(std::string("nftlink: a ") + what + " reply did not fit a 64 KiB buffer");
      throw std::runtime_error(std::string("nftlink: receiving the ") + what + " reply failed: " + strerror(e));
    }
    int len = int(n);
    bool done = false;
    for (auto *nlh = reinterpret_cast<const nlmsghdr *>(rb.data()); mnl_nlmsg_ok(nlh, len);
         nlh = mnl_nlmsg_next(nlh, &len)) {
      if (nlh->nlmsg_seq != seq || (nlh->nlmsg_pid != 0 && nlh->nlmsg_pid != sock.portid()))
        continue;  // not ours (a leftover); drainStale() normally prevents this
      if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) res.interrupted = true;
      if (nlh->nlmsg_type == NLMSG_DONE) {
        // A dump that failed half-way ends with NLMSG_DONE carrying a negative errno.
        if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
          int code;
          std::memcpy(&code, mnl_nlmsg_get_payload(nlh), sizeof code);
          if (code < 0) res.error = -code;
        }
        done = true;
        break;
      }
      if (nlh->nlmsg_type == NLMSG_ERROR) {
        if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(nlmsgerr)) {
          const auto *err = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh));
          if (err->error == 0) continue;  // an ACK: not expected, harmless
          res.error = err->error < 0 ? -err->error : err->error;
        } else {
          res.error = EPROTO;
        }
        done = true;  // the kernel sends nothing after a request's error
        break;
      }
      if (nlh->nlmsg_type == NLMSG_NOOP || nlh->nlmsg_type == NLMSG_OVERRUN) continue;
      if (!failure) {
        try {
          each(nlh);
        } catch (...) {
          failure = std::current_exception();
        }
      }
      if (!dump) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  if (failure) std::rethrow_exception(failure);
  return res;
}

}  // namespace nftlink
