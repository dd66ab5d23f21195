// The shared shape of every asynchronous call: a Napi::AsyncWorker that resolves a Promise, runs its
// kernel work on the libuv pool while holding the handle's mutex, in its turn among the handle's
// requests (Ticket, socket.h), and turns every C++ exception into a rejected Promise (never a crash).
#pragma once

#include <napi.h>

#include <memory>
#include <mutex>
#include <exception>
#include <new>
#include <string>

#include "socket.h"

namespace nftlink {

// Inside a catch (...): the message the caller gets for the exception being handled. Every path
// that runs kernel work turns exceptions into errors with it (never a crash, one wording).
inline std::string currentErrorMessage() {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return "nftlink: out of memory";
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "nftlink: unexpected internal error";
  }
}

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, std::shared_ptr<Handle> h)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), handle_(std::move(h)), ticket_(*handle_) {}
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  Handle &handle() { return *handle_; }
  // Runs off the JS thread with the socket to itself.
  virtual void run(NlSocket &sock) = 0;
  // Runs on the JS thread after run() succeeded.
  virtual Napi::Value result(Napi::Env env) = 0;

 private:
  void Execute() final {
    std::unique_lock<std::mutex> lock(handle_->mu);
    ticket_.wait(*handle_, lock);
    try {
      if (handle_->closed.load() || !handle_->sock) {
        SetError("nftlink: the handle is closed");
      } else {
        // A previous request that failed half-way may have left replies queued.
        handle_->sock->drainStale();
        run(*handle_->sock);
      }
    } catch (...) {
      SetError(currentErrorMessage());
    }
    // close() could not take the mutex while we ran: release the socket on its behalf.
    if (handle_->closed.load()) handle_->sock.reset();
    Ticket::done(*handle_);
  }
  void OnOK() final {
    Napi::HandleScope scope(Env());
    try {
      deferred_.Resolve(result(Env()));
    } catch (const Napi::Error &e) {
      deferred_.Reject(e.Value());
    }
  }
  void OnError(const Napi::Error &e) final { deferred_.Reject(e.Value()); }

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Handle> handle_;
  Ticket ticket_;
};

}  // namespace nftlink
