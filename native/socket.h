// One NETLINK_NETFILTER socket, opened inside a chosen network namespace, and the handle JS holds.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

struct mnl_socket;

namespace nftlink {

struct NetnsTarget {
  enum Type { Current, Path, Fd } type = Current;
  std::string path;  // Type::Path (a bare name is turned into /run/netns/NAME by the caller)
  int fd = -1;       // Type::Fd: owned by the caller, never closed here
  std::string describe() const;
};

class NlSocket {
 public:
  // Enters the namespace on the calling thread only for socket(2), then returns to the original one
  // (a netlink socket stays bound to the namespace it was created in). Throws std::runtime_error.
  static std::unique_ptr<NlSocket> open(const NetnsTarget &ns);
  ~NlSocket();
  NlSocket(const NlSocket &) = delete;
  NlSocket &operator=(const NlSocket &) = delete;

  int fd() const;
  mnl_socket *mnl() const { return nl_; }
  uint32_t portid() const { return portid_; }
  // Reserves n consecutive sequence numbers and returns the first.
  uint32_t takeSeq(uint32_t n);

  // Grow SO_SNDBUF / SO_RCVBUF to at least `bytes` (FORCE variants first: they ignore
  // net.core.{w,r}mem_max but need CAP_NET_ADMIN). Returns the size the kernel now reports.
  size_t ensureSndBuf(size_t bytes);
  size_t ensureRcvBuf(size_t bytes);

  // Discards anything queued (a reply left over by an aborted request, a pending ENOBUFS), so every
  // request starts on an empty stream.
  void drainStale();

 private:
  NlSocket() = default;
  size_t growBuf(int forceOpt, int opt, size_t bytes, size_t *cache);
  mnl_socket *nl_ = nullptr;
  uint32_t portid_ = 0;
  uint32_t seq_ = 0;
  size_t sndbuf_ = 0;
  size_t rcvbuf_ = 0;
};

// What a JS NativeHandle points at (through a shared_ptr, so an in-flight worker keeps it alive after
// close() or garbage collection). `mu` serialises requests: one socket carries one request at a time.
struct Handle {
  std::mutex mu;
  std::unique_ptr<NlSocket> sock;  // guarded by mu; reset when closed
  std::atomic<bool> closed{false};
  // Requests queued on the libuv pool and not yet finished (Ticket). Changed on the JS thread when
  // queued, on the pool when done; a commit runs on the JS thread only when it is 0 (commit.cc), so
  // requests still reach the kernel in the order they were made.
  std::atomic<int> queued{0};
  // The pool has several threads: its requests of one handle take their turns by ticket (Ticket).
  uint64_t ticketsIssued = 0;  // JS thread only
  uint64_t ticketsServed = 0;  // guarded by mu
  std::condition_variable turn;
  // The CPU time the last commit small enough to run on the JS thread took, in microseconds
  // (commit.cc, kInlineCommitMaxMicros): a table whose small commits are slow goes back to the pool.
  std::atomic<uint32_t> smallCommitMicros{0};
  uint32_t portid = 0;  // the socket's, set by open() before the handle is shared; read without mu
};

// A pool request's place in its handle's queue, taken on the JS thread when the request is made:
// requests of one handle run in that order whichever pool thread picks them up first.
class Ticket {
 public:
  explicit Ticket(Handle &h) : number_(h.ticketsIssued++) { h.queued.fetch_add(1); }
  // Pool thread, holding `lock` on h.mu: waits until every earlier request of the handle has run.
  void wait(Handle &h, std::unique_lock<std::mutex> &lock) const {
    h.turn.wait(lock, [&] { return h.ticketsServed == number_; });
  }
  // Pool thread, still holding the lock: the next request's turn.
  static void done(Handle &h) {
    h.ticketsServed++;
    h.queued.fetch_sub(1);
    h.turn.notify_all();
  }

 private:
  uint64_t number_;
};

}  // namespace nftlink
