// See relay.h. One process-wide loop: an epoll thread, started with the first relay, owning every
// relay's dup'ed sockets and pipes. JS hands work in through a mutex-protected queue and an eventfd;
// results come back through one thread-safe function, referenced only while relays run (so the
// loop never keeps Node alive).
#include "relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace nftlink {
namespace {

// Pipe size per direction: larger pipes move more per splice call (the default is 64 KiB).
constexpr int kPipeBytes = 1 << 18;
constexpr size_t kSpliceMax = 1 << 20;

struct Direction {
  int src = -1, dst = -1;
  int pipeRead = -1, pipeWrite = -1;
  size_t inPipe = 0;
  bool srcEnded = false;
  bool done = false;  // source ended, pipe drained, destination shut down for writing
  double bytes = 0;
};

using Clock = std::chrono::steady_clock;

struct Relay {
  uint32_t id = 0;
  int a = -1, b = -1;
  Direction ab, ba;
  std::string error;
  // The upstream connect in progress, and when it gives up.
  bool dialing = false;
  Clock::time_point deadline;
  uint32_t timeoutMs = 0;
  Napi::Promise::Deferred deferred;
  explicit Relay(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
};

void closeFd(int &fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Moves what it can without blocking; false when the relay must end (an error on either socket).
bool pump(Direction &d, std::string &error) {
  for (;;) {
    if (d.inPipe > 0) {
      ssize_t n = splice(d.pipeRead, nullptr, d.dst, nullptr, d.inPipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        d.inPipe -= size_t(n);
        d.bytes += double(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return true;  // wait for EPOLLOUT on dst
      error = n < 0 ? std::string("write: ") + strerror(errno) : "write: no progress";
      return false;
    }
    if (d.srcEnded) {
      if (!d.done) {
        shutdown(d.dst, SHUT_WR);
        d.done = true;
      }
      return true;
    }
    ssize_t n = splice(d.src, nullptr, d.pipeWrite, nullptr, kSpliceMax, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      d.inPipe += size_t(n);
      continue;
    }
    if (n == 0) {
      d.srcEnded = true;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return true;  // nothing to read (or the pipe is full: drained above)
    error = std::string("read: ") + strerror(errno);
    return false;
  }
}

class Loop {
 public:
  static Loop &get() {
    static Loop *loop = new Loop();  // never destroyed: its thread runs for the process's life
    return *loop;
  }

  // JS thread. Takes a dup of the client's fd and dials the endpoint from the loop thread.
  Napi::Value dial(Napi::Env env, int clientFd, const sockaddr_storage &to, socklen_t toLen, uint32_t timeoutMs) {
    ensureThread(env);
    auto r = std::make_unique<Relay>(env);
    Napi::Promise promise = r->deferred.Promise();
    std::string why;
    if (!setUp(*r, clientFd, to, toLen, &why)) {
      tearDown(*r);
      r->deferred.Reject(Napi::Error::New(env, "nftlink: relayDial(): " + why).Value());
      return promise;
    }
    r->dialing = true;
    r->timeoutMs = timeoutMs;
    r->deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    r->id = ++nextId_;
    promise.Set("relayId", Napi::Number::New(env, r->id));
    {
      std::lock_guard<std::mutex> lock(mu_);
      incoming_.push_back(r.release());
      if (active_++ == 0) tsfn_.Ref(env);
    }
    wake();
    return promise;
  }

  void cancel(uint32_t id) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancels_.push_back(id);
    }
    wake();
  }

  uint32_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return active_;
  }

 private:
  Loop() = default;

  void ensureThread(Napi::Env env) {
    if (started_) return;
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epfd_ < 0 || wakeFd_ < 0) throw Napi::Error::New(env, std::string("nftlink: relay loop: ") + strerror(errno));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, wakeFd_, &ev);
    tsfn_ = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo &) {}), "nftlink-relay", 0, 1);
    tsfn_.Unref(env);
    started_ = true;
    std::thread([this] { run(); }).detach();
  }

  static bool setUp(Relay &r, int clientFd, const sockaddr_storage &to, socklen_t toLen, std::string *why) {
    r.a = fcntl(clientFd, F_DUPFD_CLOEXEC, 0);
    if (r.a < 0) {
      *why = std::string("cannot take the client socket: ") + strerror(errno);
      return false;
    }
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(r.a, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
      *why = "the client fd must be a stream socket";
      return false;
    }
    // Shared file status flags: libuv's sockets are non-blocking already; make sure.
    fcntl(r.a, F_SETFL, fcntl(r.a, F_GETFL) | O_NONBLOCK);
    r.b = socket(to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (r.b < 0) {
      *why = std::string("socket: ") + strerror(errno);
      return false;
    }
    int one = 1;
    setsockopt(r.b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(r.a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(r.b, reinterpret_cast<const sockaddr *>(&to), toLen) != 0 && errno != EINPROGRESS) {
      // Refused at once (no route, say): reported as a failed dial, like a late refusal.
      r.error = std::string("dial: ") + strerror(errno);
    }
    for (Direction *d : {&r.ab, &r.ba}) {
      int p[2];
      if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) {
        *why = std::string("pipe: ") + strerror(errno);
        return false;
      }
      d->pipeRead = p[0];
      d->pipeWrite = p[1];
      fcntl(p[1], F_SETPIPE_SZ, kPipeBytes);  // best effort (pipe-max-size)
    }
    r.ab.src = r.a;
    r.ab.dst = r.b;
    r.ba.src = r.b;
    r.ba.dst = r.a;
    return true;
  }

  static void tearDown(Relay &r) {
    for (Direction *d : {&r.ab, &r.ba}) {
      closeFd(d->pipeRead);
      closeFd(d->pipeWrite);
    }
    closeFd(r.a);
    closeFd(r.b);
  }

  void wake() {
    uint64_t one = 1;
    ssize_t n = write(wakeFd_, &one, sizeof one);
    (void)n;
  }

  // Loop thread from here on.
  void run() {
    epoll_event events[256];
    for (;;) {
      int n = epoll_wait(epfd_, events, 256, nextTimeoutMs());
      if (n < 0 && errno == EINTR) continue;
      expireDials();
      for (int i = 0; i < n; i++) {
        Relay *r = static_cast<Relay *>(events[i].data.ptr);
        if (!r) {
          uint64_t v;
          while (read(wakeFd_, &v, sizeof v) > 0) {
          }
          admit();
          continue;
        }
        // Compared as a pointer, never dereferenced: an earlier event of this batch may have
        // finished (and the JS thread freed) it.
        if (live_.count(r)) service(r);
      }
    }
  }

  // Dials still in progress give up at their deadline (the loop wakes for the earliest).
  int nextTimeoutMs() {
    if (dials_.empty()) return -1;
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(dials_.begin()->first - Clock::now()).count();
    return wait < 0 ? 0 : int(wait) + 1;
  }

  void expireDials() {
    const auto now = Clock::now();
    while (!dials_.empty() && dials_.begin()->first <= now) {
      auto it = relays_.find(dials_.begin()->second);
      dials_.erase(dials_.begin());
      if (it == relays_.end() || !it->second->dialing) continue;
      it->second->error = "dial: timed out after " + std::to_string(it->second->timeoutMs) + " ms";
      finish(it->second);
    }
  }

  void admit() {
    std::deque<Relay *> in;
    std::deque<uint32_t> cancels;
    {
      std::lock_guard<std::mutex> lock(mu_);
      in.swap(incoming_);
      cancels.swap(cancels_);
    }
    for (Relay *r : in) {
      relays_[r->id] = r;
      live_.insert(r);
      if (!r->error.empty()) {
        finish(r);
        continue;
      }
      dials_.emplace(r->deadline, r->id);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
      ev.data.ptr = r;
      if (epoll_ctl(epfd_, EPOLL_CTL_ADD, r->a, &ev) != 0 || epoll_ctl(epfd_, EPOLL_CTL_ADD, r->b, &ev) != 0) {
        r->error = std::string("epoll: ") + strerror(errno);
        finish(r);
        continue;
      }
      service(r);  // data may have arrived before the sockets were watched
    }
    for (uint32_t id : cancels) {
      auto it = relays_.find(id);
      if (it == relays_.end()) continue;
      it->second->error = "cancelled";
      finish(it->second);
    }
  }

  void service(Relay *r) {
    if (r->dialing) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(r->b, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        r->error = std::string("dial: ") + strerror(err);
        finish(r);
        return;
      }
      sockaddr_storage peer;
      socklen_t plen = sizeof peer;
      if (getpeername(r->b, reinterpret_cast<sockaddr *>(&peer), &plen) != 0) return;  // still connecting
      r->dialing = false;
    }
    if (!pump(r->ab, r->error) || !pump(r->ba, r->error)) {
      finish(r);
      return;
    }
    if (r->ab.done && r->ba.done) finish(r);
  }

  void finish(Relay *r) {
    relays_.erase(r->id);
    live_.erase(r);
    if (r->a >= 0) epoll_ctl(epfd_, EPOLL_CTL_DEL, r->a, nullptr);
    if (r->b >= 0) epoll_ctl(epfd_, EPOLL_CTL_DEL, r->b, nullptr);
    if (!r->error.empty()) {
      // An error, a cancel or a failed dial: the client's socket ends now, so it sees it at once
      // (the upstream socket is ours and closes with tearDown).
      shutdown(r->a, SHUT_RDWR);
    }
    tearDown(*r);
    napi_status st = tsfn_.NonBlockingCall(r, [this](Napi::Env env, Napi::Function, Relay *done) {
      std::unique_ptr<Relay> own(done);
      Napi::Object out = Napi::Object::New(env);
      out.Set("aToB", Napi::Number::New(env, own->ab.bytes));
      out.Set("bToA", Napi::Number::New(env, own->ba.bytes));
      out.Set("error", Napi::String::New(env, own->error));
      own->deferred.Resolve(out);
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) tsfn_.Unref(env);
    });
    if (st != napi_ok) delete r;  // the environment is going away: nobody waits for it
  }

  std::mutex mu_;
  std::deque<Relay *> incoming_;
  std::deque<uint32_t> cancels_;
  uint32_t active_ = 0;
  uint32_t nextId_ = 0;
  bool started_ = false;
  int epfd_ = -1, wakeFd_ = -1;
  Napi::ThreadSafeFunction tsfn_;
  std::map<uint32_t, Relay *> relays_;  // loop thread only
  std::set<Relay *> live_;              // loop thread only
  std::multimap<Clock::time_point, uint32_t> dials_;  // loop thread only: deadline -> relay
};

bool fdArg(const Napi::Value &v, int *out) {
  if (!v.IsNumber()) return false;
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 1 << 30) || d != double(int(d))) return false;
  *out = int(d);
  return true;
}

}  // namespace

Napi::Value RelayDial(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() < 4 || !fdArg(info[0], &fd)) throw Napi::TypeError::New(env, "nftlink: relayDial(): expected the client socket's fd");
  if (!info[1].IsString()) throw Napi::TypeError::New(env, "nftlink: relayDial(): `address` must be a string");
  const std::string addr = info[1].As<Napi::String>().Utf8Value();
  if (!info[2].IsNumber() || !info[3].IsNumber()) throw Napi::TypeError::New(env, "nftlink: relayDial(): `port` and `timeoutMs` must be numbers");
  const double port = info[2].As<Napi::Number>().DoubleValue();
  const double timeout = info[3].As<Napi::Number>().DoubleValue();
  if (!(port >= 1 && port <= 65535) || port != double(int(port))) throw Napi::RangeError::New(env, "nftlink: relayDial(): `port` must be 1..65535");
  if (!(timeout >= 1 && timeout <= 3600000)) throw Napi::RangeError::New(env, "nftlink: relayDial(): `timeoutMs` must be 1..3600000");
  sockaddr_storage to{};
  socklen_t len;
  auto *v4 = reinterpret_cast<sockaddr_in *>(&to);
  auto *v6 = reinterpret_cast<sockaddr_in6 *>(&to);
  if (addr.size() < 64 && inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(uint16_t(port));
    len = sizeof *v4;
  } else if (addr.size() < 64 && inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(uint16_t(port));
    len = sizeof *v6;
  } else {
    throw Napi::TypeError::New(env, "nftlink: relayDial(): `address` is not an IPv4 or IPv6 address");
  }
  return Loop::get().dial(env, fd, to, len, uint32_t(timeout));
}

Napi::Value RelayCancel(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "nftlink: relayCancel(): expected a relay id");
  Loop::get().cancel(info[0].As<Napi::Number>().Uint32Value());
  return env.Undefined();
}

Napi::Value RelayCount(const Napi::CallbackInfo &info) {
  return Napi::Number::New(info.Env(), Loop::get().count());
}

}  // namespace nftlink
