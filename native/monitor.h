// The nf_tables event monitor: one NETLINK_NETFILTER socket in a namespace, subscribed to the
// NFNLGRP_NFTABLES multicast group, read on the JS thread's libuv loop (uv_poll and non-blocking
// recv: the JS thread never waits for the kernel) and handed to JS in the compact format.
#pragma once

#include <napi.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "socket.h"
#include "wire.h"

namespace nftlink {

// What the monitor's callback is called with: onEvents(what, batch, message).
enum MonitorCall : uint32_t {
  kMonitorEvents = 0,  // batch: a compact-format message of events (below)
  kMonitorLost = 1,    // the socket overran (ENOBUFS): events were dropped between the last batch and the next
  kMonitorError = 2,   // the socket failed (message); the monitor has closed itself
};

// The op kind a NFT_MSG_NEWGEN event is written as (after wire.h's five object kinds): its
// attributes are kGen* below.
constexpr uint8_t kMonitorGeneration = 5;
enum MonitorGenAttr : uint16_t { kGenId = 0, kGenPid = 1, kGenProcName = 2, kGenPortid = 3, kGenSeq = 4 };

class Monitor {
 public:
  // Opens the socket in `ns` (NlSocket::open), joins the group, sets SO_RCVBUF to `rcvbuf` bytes
  // (exactly: a test asks for a small one) and starts polling. Throws std::runtime_error.
  static std::shared_ptr<Monitor> open(Napi::Env env, const NetnsTarget &ns, size_t rcvbuf, Napi::Function onEvents,
                                       uint32_t skipPortid = 0);
  ~Monitor();
  Monitor(const Monitor &) = delete;
  Monitor &operator=(const Monitor &) = delete;

  // Stop and start reading: while paused the kernel queues events in the socket buffer, and once
  // that is full it drops them and the next read reports ENOBUFS (kMonitorLost).
  void pause();
  void resume();
  // Idempotent: stops polling, closes the socket, releases the callback.
  void close();
  bool closed() const { return closed_; }
  uint32_t portid() const { return portid_; }
  // SO_RCVBUF as the kernel reports it (twice what was asked: its bookkeeping).
  size_t rcvbuf() const { return rcvbuf_; }

 private:
  explicit Monitor(Napi::Env env) : env_(env) {}
  static void onPoll(uv_poll_t *handle, int status, int events);
  static void cleanupHook(void *arg);
  void readable();
  void parse(const uint8_t *buf, size_t len);
  void call(MonitorCall what, Napi::Value batch, const std::string &message);
  void startBatch();
  void flush();

  // The poll handle and the socket it watches, freed together by uv_close's callback: libuv drops an
  // fd from epoll only on its next loop iteration, so the fd must stay open (and its number
  // unused by a new monitor's socket) until then.
  struct Polled {
    uv_poll_t poll;
    std::unique_ptr<NlSocket> sock;
  };

  napi_env env_;
  Polled *polled_ = nullptr;
  Napi::FunctionReference onEvents_;
  std::unique_ptr<Napi::AsyncContext> async_;
  std::vector<uint8_t> buf_;
  Writer batch_;
  uint32_t count_ = 0;
  uint32_t portid_ = 0;
  // Changes committed through this netlink port are not decoded (their NEWGEN still is): a
  // process watching for others' changes to a table it writes itself pays nothing for its own.
  uint32_t skipPortid_ = 0;
  size_t rcvbuf_ = 0;
  bool overrun_ = false;  // ENOBUFS seen, reported once the queue is drained (readable())
  bool paused_ = false;
  bool calling_ = false;  // inside onEvents
  bool closed_ = false;
  bool hooked_ = false;
};

}  // namespace nftlink
