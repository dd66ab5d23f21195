#include "commit-stream.h"

#include <new>
#include <stdexcept>

#include "wire.h"
#include "worker.h"

namespace nftlink {

namespace {

// A first guess at a streamed batch's size: it grows by half as parts come (realloc; large blocks
// are remapped, not copied).
constexpr size_t kStreamCapacity = 256 * 1024;

// Builds the parts fed so far, on the pool, while JavaScript goes on encoding. Errors are kept in
// the stream and reported by end(): a feed has no promise of its own.
class BuildWorker : public Napi::AsyncWorker {
 public:
  BuildWorker(Napi::Env env, std::shared_ptr<CommitStream> s) : Napi::AsyncWorker(env), s_(std::move(s)) {}

 protected:
  void Execute() override { s_->buildQueued(true); }
  void OnOK() override {}
  void OnError(const Napi::Error &) override {}

 private:
  std::shared_ptr<CommitStream> s_;
};

// The end of a streamed commit: what is left to build, then the batch, as commit() sends it.
class EndWorker : public PromiseWorker {
 public:
  EndWorker(Napi::Env env, std::shared_ptr<Handle> h, std::shared_ptr<CommitStream> s, uint16_t flags, uint32_t genid)
      : PromiseWorker(env, std::move(h)), s_(std::move(s)), flags_(flags), genid_(genid) {}

 protected:
  void run(NlSocket &sock) override {
    s_->buildQueued(false);
    res_ = s_->sendBuilt(sock, flags_, genid_);
  }
  Napi::Value result(Napi::Env env) override { return commitResultToJs(env, res_); }

 private:
  std::shared_ptr<CommitStream> s_;
  uint16_t flags_;
  uint32_t genid_;
  CommitResult res_;
};

}  // namespace

CommitStream::CommitStream(std::shared_ptr<Handle> h) : handle_(std::move(h)), builder_(kStreamCapacity) {}

void CommitStream::feed(Napi::Env env, Napi::Uint8Array arr, uint32_t count) {
  if (ended_) throw std::logic_error("nftlink: this streamed commit has ended; it takes no more parts");
  CommitRequest bytes = requestOf(arr);
  const size_t len = bytes.len;
  // A moved vector keeps its buffer: `data` stays valid for a copied part.
  Part part{bytes.data, len, std::move(bytes.copy), kHeaderSize + bytesFed_, opsFed_, count};
  if (!bytes.ref.IsEmpty()) keep_.push_back(std::move(bytes.ref));
  bytesFed_ += len;
  opsFed_ += count;
  bool startWorker = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(part));
    if (!workerQueued_) workerQueued_ = startWorker = true;
  }
  if (startWorker) (new BuildWorker(env, shared_from_this()))->Queue();
}

void CommitStream::buildQueued(bool fromBuildWorker) {
  std::lock_guard<std::mutex> building(buildMu_);
  for (;;) {
    Part part;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty() || cancelled_) {
        queue_.clear();
        // Under mu_: a part fed after this point queues a worker of its own.
        if (fromBuildWorker) workerQueued_ = false;
        return;
      }
      part = std::move(queue_.front());
      queue_.pop_front();
    }
    // One malformed part spoils the batch: the parts after it are only dropped.
    if (!error_.empty()) continue;
    try {
      RequestReader rd = RequestReader::part(part.data, part.len, part.base, part.firstOp, part.count);
      builder_.add(rd, part.count);
      rd.finish();
    } catch (...) {
      error_ = currentErrorMessage();
    }
  }
}

CommitResult CommitStream::sendBuilt(NlSocket &sock, uint16_t flags, uint32_t genid) {
  std::lock_guard<std::mutex> building(buildMu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) throw std::runtime_error("nftlink: the streamed commit was cancelled");
  }
  if (!error_.empty()) throw std::runtime_error(error_);
  return builder_.send(sock, flags, genid);
}

Napi::Promise CommitStream::end(Napi::Env env, uint16_t flags, uint32_t genid) {
  if (ended_) {
    auto d = Napi::Promise::Deferred::New(env);
    d.Reject(Napi::Error::New(env, jsCancelled_ ? "nftlink: the streamed commit was cancelled"
                                                : "nftlink: this streamed commit has already ended")
                 .Value());
    return d.Promise();
  }
  ended_ = true;
  auto *w = new EndWorker(env, handle_, shared_from_this(), flags, genid);
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

void CommitStream::cancel() {
  if (!ended_) jsCancelled_ = true;
  ended_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  queue_.clear();
}

}  // namespace nftlink
