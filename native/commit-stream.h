// A streamed commit: the request arrives in parts while JavaScript is still encoding it, and the
// libuv pool turns each part into netlink messages meanwhile, so that only the last part is left
// to convert when the transaction is committed (the kernel still gets one batch in one sendmsg).
//
// JS thread:   feed(part) feed(part) ...            end(flags, genid) -> Promise
// pool:              build(part)   build(part) ...        build(rest), send, replies
//
// Parts are read in place, as commit() reads its request: the caller must not modify a part's bytes
// until the stream is gone (nftlink's encoder only appends after them; when it must roll back over
// them it cancels the stream and moves to a fresh buffer). A part in a SharedArrayBuffer is copied.
// The batch is built in feed order by one thread at a time (buildMu_); nothing reaches the kernel
// before end().
#pragma once

#include <napi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commit.h"
#include "socket.h"

namespace nftlink {

class CommitStream : public std::enable_shared_from_this<CommitStream> {
 public:
  explicit CommitStream(std::shared_ptr<Handle> h);

  // JS thread. `count` whole operations, headerless (native/README.md, "Streamed commits"), in
  // `part`, which the stream keeps alive. Throws std::logic_error once it has ended or was cancelled.
  void feed(Napi::Env env, Napi::Uint8Array part, uint32_t count);
  // JS thread. Builds what is left, sends the batch, resolves like commit(); rejects with the first
  // malformed part's error (nothing sent). Once only.
  Napi::Promise end(Napi::Env env, uint16_t flags, uint32_t genid);
  // JS thread. Drops the parts; the batch is never sent. Idempotent.
  void cancel();

  // Pool threads.
  void buildQueued(bool fromBuildWorker);
  CommitResult sendBuilt(NlSocket &sock, uint16_t flags, uint32_t genid);

 private:
  struct Part {
    const uint8_t *data;
    size_t len;
    std::vector<uint8_t> copy;  // the bytes of a part in a SharedArrayBuffer (data points here)
    size_t base;       // byte offset in the whole request (after its 16-byte header)
    uint32_t firstOp;  // index of its first operation in the whole request
    uint32_t count;
  };

  std::shared_ptr<Handle> handle_;
  // JS thread only.
  size_t bytesFed_ = 0;
  uint32_t opsFed_ = 0;
  bool ended_ = false;        // end() or cancel() was called
  bool jsCancelled_ = false;  // cancel() came first
  // The parts' arrays, alive as long as the stream: they hold the bytes the pool reads. Released on
  // the JS thread with the stream (every owner of it lets go there: the External's finalizer and
  // the workers, which are deleted after OnOK/OnError).
  std::vector<Napi::ObjectReference> keep_;

  std::mutex mu_;                // guards the fields below it, up to buildMu_
  std::deque<Part> queue_;
  bool workerQueued_ = false;    // a BuildWorker will look at the queue
  bool cancelled_ = false;

  std::mutex buildMu_;           // held while building; guards the fields below it
  BatchBuilder builder_;
  std::string error_;            // the first part that could not be built
};

}  // namespace nftlink
