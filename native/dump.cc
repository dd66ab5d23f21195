#include "dump.h"

#include <algorithm>

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "element-hash.h"
#include "generation.h"
#include "identity-set.h"
#include "netlink-request.h"
#include "nftnl-objects.h"
#include "object-writer.h"
#include "wire.h"
#include "worker.h"

namespace nftlink {

namespace {

// dumpSetElementsStream: the elements leave in parts, each a complete reply message (header + one
// kind-4 op holding some of the elements), while the kernel is still producing the rest.
class PartSink {
 public:
  virtual ~PartSink() = default;
  // JS has consumed every part handed over so far.
  virtual bool idle() const = 0;
  virtual void send(Writer &&part, uint32_t attempt) = 0;
};

// Cuts one set's element stream into parts. A part goes out at a kernel message boundary once it has
// at least kMinPart bytes and JS is idle (so JS decodes while the kernel walks on), or when it reaches
// kMaxPart regardless.
class Parts {
 public:
  static constexpr size_t kMinPart = 16 * 1024;
  static constexpr size_t kMaxPart = 1024 * 1024;

  Parts(PartSink &sink, uint8_t family, const std::string &table, const std::string &set)
      : sink_(sink), family_(family), table_(table), set_(set) {}

  void beginAttempt(uint32_t attempt, uint32_t genid) {
    attempt_ = attempt;
    genid_ = genid;
    w_.clear();
    n_ = 0;
  }
  // The writer for the current part, its header and op prefix already written.
  Writer &w() {
    if (w_.size() == 0) {
      if (w_.data() == nullptr) w_ = Writer(4 * kMinPart);
      w_.u32(kMagic);
      w_.u16(kVersion);
      w_.u16(0);
      w_.u32(genid_);
      w_.u32(1);
      countAt_ = writeElementsOpHead(w_, kNewSetElem, family_, table_.c_str(), set_.c_str());
      n_ = 0;
    }
    return w_;
  }
  void added(uint32_t n) { n_ += n; }
  // After each kernel message; `last`: the set's dump is complete.
  void boundary(bool last) {
    if (n_ == 0) return;
    const size_t sz = w_.size();
    if (!(last || sz >= kMaxPart || (sz >= kMinPart && sink_.idle()))) return;
    w_.patchU32(countAt_, n_);
    sink_.send(std::move(w_), attempt_);
    w_ = Writer();
    n_ = 0;
  }

 private:
  PartSink &sink_;
  uint8_t family_;
  const std::string &table_;
  const std::string &set_;
  uint32_t attempt_ = 0;
  uint32_t genid_ = 0;
  Writer w_;
  size_t countAt_ = 0;
  uint32_t n_ = 0;
};

struct SetRef {
  uint8_t family;
  std::string table;
  std::string name;
  // Whether kDumpElementHashes covers the set (named, not an interval set), and how it hashes.
  bool hashable = false;
  SetShape shape;
};

// Whether userdata (TLVs of u8 type, u8 length, value: libnftnl's udata.h) holds a TLV of this type
// and length; a malformed tail ends the walk.
bool hasUdata(const uint8_t *u, uint32_t len, uint8_t type, uint8_t size) {
  for (uint32_t i = 0; u && i + 2 <= len && i + 2 + u[i + 1] <= len; i += 2 + u[i + 1])
    if (u[i] == type && u[i + 1] == size) return true;
  return false;
}

// Whether the set is anonymous and its userdata carries nftlink's elements digest (dump.h).
bool digestedAnonymous(nftnl_set *s) {
  if (!(nftnl_set_get_u32(s, NFTNL_SET_FLAGS) & NFT_SET_ANONYMOUS) || !nftnl_set_is_set(s, NFTNL_SET_USERDATA))
    return false;
  uint32_t len = 0;
  auto *u = static_cast<const uint8_t *>(nftnl_set_get_data(s, NFTNL_SET_USERDATA, &len));
  return hasUdata(u, len, kElementsDigestUdata, 16);
}

// Whether the rule's userdata carries nftlink's expressions digest (dump.h).
bool digestedRule(nftnl_rule *r) {
  if (!nftnl_rule_is_set(r, NFTNL_RULE_USERDATA)) return false;
  uint32_t len = 0;
  auto *u = static_cast<const uint8_t *>(nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len));
  return hasUdata(u, len, kRuleExprsDigestUdata, 8);
}

class Dumper {
 public:
  Dumper(NlSocket &sock, const DumpSpec &spec, Parts *parts = nullptr) : sock_(sock), spec_(spec), parts_(parts) {}

  // One attempt; returns false if the kernel interrupted a dump (the ruleset changed under it).
  bool attempt(Writer &w, uint32_t *count) {
    count_ = 0;
    intr_ = false;
    w_ = &w;
    if (spec_.oneSet) {
      elements({spec_.family, spec_.table, spec_.set, false, {}});
    } else {
      if (spec_.what & kDumpTables) tables();
      if (spec_.what & kDumpChains) chains();
      std::vector<SetRef> sets;
      if (spec_.what & (kDumpSets | kDumpElements)) sets = this->sets((spec_.what & kDumpSets) != 0);
      if (spec_.what & kDumpElements)
        for (const auto &s : sets) elements(s);
      if (spec_.what & kDumpRules) rules();
      if (spec_.what & kDumpObjects) objects();
      if (spec_.what & kDumpFlowtables) flowtables();
    }
    *count = count_;
    return !intr_;
  }

 private:
  bool tableMatches(const char *t) const { return !spec_.hasTable || (t && spec_.table == t); }

  nlmsghdr *request(uint8_t type, uint8_t family) {
    req_.assign(MNL_SOCKET_BUFFER_SIZE, 0);
    return nftnl_nlmsg_build_hdr(reinterpret_cast<char *>(req_.data()), type, family, NLM_F_DUMP,
                                 sock_.takeSeq(1));
  }

  void run(const char *what, nlmsghdr *req, const std::function<void(const nlmsghdr *)> &each) {
    RequestResult r = netlinkRequest(sock_, what, req, true, each);
    if (r.interrupted) intr_ = true;
    if (r.error) {
      // A table or set deleted between our listing and its dump: the generation check retries.
      // (Not for dumpSetElements: there a missing set is the answer.)
      if ((r.error == ENOENT && !spec_.oneSet) || r.error == EINTR || r.error == EAGAIN) {
        intr_ = true;
        return;
      }
      throw std::runtime_error(std::string("nftlink: the kernel refused the ") + what +
                               " dump: " + strerror(r.error) + " (errno " + std::to_string(r.error) + ")");
    }
  }

  void tables() {
    run("table", request(NFT_MSG_GETTABLE, spec_.family), [&](const nlmsghdr *nlh) {
      TablePtr t(checkAlloc(nftnl_table_alloc(), "table"));
      if (nftnl_table_nlmsg_parse(nlh, t.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a table from the kernel");
      if (!tableMatches(nftnl_table_get_str(t.get(), NFTNL_TABLE_NAME))) return;
      writeTableOp(*w_, t.get(), kNewTable, familyOf(nlh));
      count_++;
    });
  }

  void chains() {
    chainNames_.clear();
    run("chain", request(NFT_MSG_GETCHAIN, spec_.family), [&](const nlmsghdr *nlh) {
      ChainPtr c(checkAlloc(nftnl_chain_alloc(), "chain"));
      if (nftnl_chain_nlmsg_parse(nlh, c.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a chain from the kernel");
      if (!tableMatches(nftnl_chain_get_str(c.get(), NFTNL_CHAIN_TABLE))) return;
      if (spec_.what & kDumpRulesPerChain) {
        const char *name = nftnl_chain_get_str(c.get(), NFTNL_CHAIN_NAME);
        if (name) chainNames_.push_back({familyOf(nlh), name});
      }
      writeChainOp(*w_, c.get(), kNewChain, familyOf(nlh));
      count_++;
    });
  }

  // Writes the sets when `emit`; returns those whose elements the dump reads.
  std::vector<SetRef> sets(bool emit) {
    std::vector<SetRef> out;
    run("set", request(NFT_MSG_GETSET, spec_.family), [&](const nlmsghdr *nlh) {
      SetPtr s(checkAlloc(nftnl_set_alloc(), "set"));
      if (nftnl_set_nlmsg_parse(nlh, s.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a set from the kernel");
      const char *table = nftnl_set_get_str(s.get(), NFTNL_SET_TABLE);
      const char *name = nftnl_set_get_str(s.get(), NFTNL_SET_NAME);
      if (!tableMatches(table) || !name || !table) return;
      const bool omitElements = ((spec_.what & kDumpOmitDigestedElements) && digestedAnonymous(s.get())) ||
                                std::find(spec_.omitElementsOf.begin(), spec_.omitElementsOf.end(), name) != spec_.omitElementsOf.end();
      if (!omitElements) {
        const uint32_t flags = nftnl_set_get_u32(s.get(), NFTNL_SET_FLAGS);
        SetShape shape;
        shape.map = (flags & NFT_SET_MAP) != 0;
        shape.verdictMap = shape.map && nftnl_set_get_u32(s.get(), NFTNL_SET_DATA_TYPE) == NFT_DATA_VERDICT;
        out.push_back({familyOf(nlh), table, name, !(flags & (NFT_SET_ANONYMOUS | NFT_SET_INTERVAL)), shape});
      }
      if (!emit) return;
      writeSetOp(*w_, s.get(), kNewSet, familyOf(nlh));
      count_++;
    });
    return out;
  }

  void elements(const SetRef &ref) {
    nlmsghdr *req = request(NFT_MSG_GETSETELEM, ref.family);
    {
      SetPtr s(checkAlloc(nftnl_set_alloc(), "set"));
      nftnl_set_set_str(s.get(), NFTNL_SET_TABLE, ref.table.c_str());
      nftnl_set_set_str(s.get(), NFTNL_SET_NAME, ref.name.c_str());
      nftnl_set_elems_nlmsg_build_payload(req, s.get());  // no elements attached: names the set only
    }
    size_t countAt = 0;
    if (!parts_) {
      countAt = writeElementsOpHead(*w_, kNewSetElem, ref.family, ref.table.c_str(), ref.name.c_str());
    }
    // Kernel fact (seen on 6.18): a hash set's element dump resumes each netlink dump call by skipping
    // the elements already sent, and the rhashtable may be resized (deferred work, e.g. right after a
    // large insert) between calls. The walk order then changes and the dump repeats some elements and
    // misses as many others, without NLM_F_DUMP_INTR. A repeated element identity means exactly that:
    // treat it as an interrupted dump and retry.
    struct Ctx {
      Writer *w;
      uint32_t n;
      IdentitySet *seen;
      bool repeated;
      // kDumpElementHashes: the elements' hashes while none is declined (elements(): not in parts).
      ElementHasher *hasher;
      const SetShape *shape;
      std::vector<double> *hashes;
    } ctx{w_, 0, &seen_, false, nullptr, &ref.shape, &hashes_};
    seen_.clear();
    hashes_.clear();
    const bool hashing = (spec_.what & kDumpElementHashes) && ref.hashable && !parts_;
    if (hashing) ctx.hasher = &hasher_;
    run("set element", req, [&](const nlmsghdr *nlh) {
      // One libnftnl set per message, written out and freed at once: a 200k-element set never sits in
      // libnftnl's lists as a whole.
      SetPtr s(checkAlloc(nftnl_set_alloc(), "set"));
      if (nftnl_set_elems_nlmsg_parse(nlh, s.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse set elements from the kernel");
      ctx.w = parts_ ? &parts_->w() : w_;
      const uint32_t before = ctx.n;
      nftnl_set_elem_foreach(
          s.get(),
          [](nftnl_set_elem *e, void *d) {
            auto *c = static_cast<Ctx *>(d);
            writeElem(*c->w, e);
            c->n++;
            if (c->hasher && !c->hasher->add(e, *c->shape, *c->hashes)) c->hasher = nullptr;
            if (!c->repeated) {
              // The identity: (len, bytes) of the key, the key end and the flags; at most 3 + 64 + 64 + 4.
              uint8_t id[3 + 2 * kDataMax + 4];
              size_t at = 0;
              for (uint16_t a : {NFTNL_SET_ELEM_KEY, NFTNL_SET_ELEM_KEY_END, NFTNL_SET_ELEM_FLAGS}) {
                uint32_t len = 0;
                const void *p = nftnl_set_elem_is_set(e, a) ? nftnl_set_elem_get(e, a, &len) : nullptr;
                if (len > (a == NFTNL_SET_ELEM_FLAGS ? 4u : kDataMax)) len = a == NFTNL_SET_ELEM_FLAGS ? 4u : kDataMax;
                id[at++] = uint8_t(len);
                if (p) std::memcpy(id + at, p, len), at += len;
              }
              if (!c->seen->insert(id, at)) c->repeated = true;
            }
            return 0;
          },
          &ctx);
      if (parts_) {
        parts_->added(ctx.n - before);
        parts_->boundary(false);
      }
    });
    if (parts_)
      parts_->boundary(true);
    else
      w_->patchU32(countAt, ctx.n);
    if (ctx.repeated) intr_ = true;
    count_++;
    if (hashing) {
      if (ctx.hasher) sortDistinct(hashes_);
      writeElementHashesOp(*w_, ref.family, ref.table.c_str(), ref.name.c_str(), ctx.hasher ? &hashes_ : nullptr);
      count_++;
    }
  }

  // Named stateful objects of every type (a GETOBJ without NFTA_OBJ_TYPE).
  void objects() {
    run("object", request(NFT_MSG_GETOBJ, spec_.family), [&](const nlmsghdr *nlh) {
      ObjPtr o(checkAlloc(nftnl_obj_alloc(), "object"));
      if (nftnl_obj_nlmsg_parse(nlh, o.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse an object from the kernel");
      if (!tableMatches(nftnl_obj_get_str(o.get(), NFTNL_OBJ_TABLE))) return;
      writeObjOp(*w_, o.get(), kNewObj, familyOf(nlh));
      count_++;
    });
  }

  void flowtables() {
    run("flowtable", request(NFT_MSG_GETFLOWTABLE, spec_.family), [&](const nlmsghdr *nlh) {
      FlowtablePtr f(checkAlloc(nftnl_flowtable_alloc(), "flowtable"));
      if (nftnl_flowtable_nlmsg_parse(nlh, f.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a flowtable from the kernel");
      if (!tableMatches(nftnl_flowtable_get_str(f.get(), NFTNL_FLOWTABLE_TABLE))) return;
      writeFlowtableOp(*w_, f.get(), kNewFlowtable, familyOf(nlh));
      count_++;
    });
  }

  void rules() {
    if (spec_.what & kDumpRulesPerChain) {
      for (const auto &[family, chain] : chainNames_) rulesOf(family, chain);
      return;
    }
    nlmsghdr *req = request(NFT_MSG_GETRULE, spec_.family);
    if (spec_.hasTable) {
      // nf_tables_dump_rules_start() filters by table name without looking it up (no ENOENT).
      RulePtr r(checkAlloc(nftnl_rule_alloc(), "rule"));
      nftnl_rule_set_str(r.get(), NFTNL_RULE_TABLE, spec_.table.c_str());
      // With a chain too, the kernel walks only that chain's rules (a metrics scrape of one counter
      // need not decode 30,000 service rules).
      if (spec_.hasChain) nftnl_rule_set_str(r.get(), NFTNL_RULE_CHAIN, spec_.chain.c_str());
      nftnl_rule_nlmsg_build_payload(req, r.get());
    }
    run("rule", req, [&](const nlmsghdr *nlh) {
      RulePtr r(checkAlloc(nftnl_rule_alloc(), "rule"));
      if (nftnl_rule_nlmsg_parse(nlh, r.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a rule from the kernel");
      if (!tableMatches(nftnl_rule_get_str(r.get(), NFTNL_RULE_TABLE))) return;
      if (spec_.hasChain && spec_.chain != nftnl_rule_get_str(r.get(), NFTNL_RULE_CHAIN)) return;
      writeRuleOp(*w_, r.get(), kNewRule, familyOf(nlh), 0, omitExprs(r.get()));
      count_++;
    });
  }

  bool omitExprs(nftnl_rule *r) const { return (spec_.what & kDumpOmitDigestedRuleExprs) && digestedRule(r); }

  // One chain's rules (kDumpRulesPerChain): the kernel looks the chain up by name.
  void rulesOf(uint8_t family, const std::string &chain) {
    nlmsghdr *req = request(NFT_MSG_GETRULE, family);
    RulePtr r(checkAlloc(nftnl_rule_alloc(), "rule"));
    nftnl_rule_set_str(r.get(), NFTNL_RULE_TABLE, spec_.table.c_str());
    nftnl_rule_set_str(r.get(), NFTNL_RULE_CHAIN, chain.c_str());
    nftnl_rule_nlmsg_build_payload(req, r.get());
    run("rule", req, [&](const nlmsghdr *nlh) {
      RulePtr rule(checkAlloc(nftnl_rule_alloc(), "rule"));
      if (nftnl_rule_nlmsg_parse(nlh, rule.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a rule from the kernel");
      writeRuleOp(*w_, rule.get(), kNewRule, familyOf(nlh), 0, omitExprs(rule.get()));
      count_++;
    });
  }

  NlSocket &sock_;
  const DumpSpec &spec_;
  std::vector<std::pair<uint8_t, std::string>> chainNames_;  // kDumpRulesPerChain: the chains() listed
  Writer *w_ = nullptr;
  Parts *parts_ = nullptr;  // dumpSetElementsStream: elements go out in parts instead of into *w_
  IdentitySet seen_;  // the element identities of this dump (repeats: see elements())
  ElementHasher hasher_;
  std::vector<double> hashes_;  // one set's element hashes (kDumpElementHashes)
  uint32_t count_ = 0;
  bool intr_ = false;
  std::vector<uint8_t> req_;
};

}  // namespace

Writer runDump(NlSocket &sock, const DumpSpec &spec) {
  // The ruleset may change while we walk it (several dumps, each its own netlink dump). Bracket the
  // walk with GETGEN and start over when the generation moved or a dump was flagged interrupted.
  constexpr int kAttempts = 20;
  size_t capacity = 64 * 1024;
  for (int attempt = 0; attempt < kAttempts; attempt++) {
    const uint32_t before = runGetGeneration(sock);
    Writer w(capacity);
    w.u32(kMagic);
    w.u16(kVersion);
    w.u16(0);
    w.u32(before);
    w.u32(0);
    uint32_t count = 0;
    Dumper d(sock, spec);
    const bool clean = d.attempt(w, &count);
    const uint32_t after = runGetGeneration(sock);
    if (clean && before == after) {
      w.patchU32(12, count);
      return w;
    }
    capacity = w.size();  // the next attempt is about as big: no regrowth
    // Give whatever moved (a commit, a deferred rhashtable resize) a moment to settle.
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * (attempt + 1)));
  }
  throw std::runtime_error("nftlink: the ruleset kept changing during the dump (" + std::to_string(kAttempts) +
                           " attempts)");
}

// Hands a finished reply to JS as the ArrayBuffer's own memory (no copy); copies only if the runtime
// refuses external buffers.
Napi::Value toUint8Array(Napi::Env env, Writer &w) {
  size_t len = 0;
  uint8_t *p = w.release(&len);
  if (p == nullptr || len == 0) {
    std::free(p);
    return Napi::Uint8Array::New(env, 0);
  }
  napi_value ab = nullptr;
  if (napi_create_external_arraybuffer(
          env, p, len, [](napi_env, void *data, void *) { std::free(data); }, nullptr, &ab) == napi_ok) {
    return Napi::Uint8Array::New(env, len, Napi::ArrayBuffer(env, ab), 0);
  }
  Napi::ArrayBuffer copy = Napi::ArrayBuffer::New(env, len);
  std::memcpy(copy.Data(), p, len);
  std::free(p);
  return Napi::Uint8Array::New(env, len, copy, 0);
}

namespace {

class DumpWorker : public PromiseWorker {
 public:
  DumpWorker(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec)
      : PromiseWorker(env, std::move(h)), spec_(std::move(spec)) {}

 protected:
  void run(NlSocket &sock) override { out_ = runDump(sock, spec_); }
  Napi::Value result(Napi::Env env) override { return toUint8Array(env, out_); }

 private:
  DumpSpec spec_;
  Writer out_;
};

// ---- dumpSetElementsStream ---------------------------------------------------------------------
//
// Parts, and finally the outcome, travel to the JS thread through one thread-safe function, in order:
// the promise settles only after every part was handed to onChunk. Not a PromiseWorker: its OnOK
// could run before the last queued part.

struct StreamItem {
  enum Type { Part, Done, Failed } type;
  Writer part;
  uint32_t attempt = 0;
  uint32_t generation = 0;
  std::string error;
};

struct StreamCtx {
  explicit StreamCtx(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise::Deferred deferred;
  Napi::ObjectReference jsError;         // what onChunk threw (the promise rejects with it)
  bool settled = false;
  std::atomic<bool> jsFailed{false};     // tells the worker to stop the dump
  std::atomic<uint32_t> inFlight{0};     // parts queued and not yet consumed
};

void streamCallJs(Napi::Env env, Napi::Function onChunk, StreamCtx *ctx, StreamItem *item);
using StreamTsfn = Napi::TypedThreadSafeFunction<StreamCtx, StreamItem, streamCallJs>;

void streamCallJs(Napi::Env env, Napi::Function onChunk, StreamCtx *ctx, StreamItem *item) {
  std::unique_ptr<StreamItem> it(item);
  if (env == nullptr || ctx == nullptr || it == nullptr) return;  // the environment is going away
  Napi::HandleScope scope(env);
  if (it->type == StreamItem::Part) {
    if (!ctx->jsFailed.load()) {
      try {
        Napi::Value chunk = toUint8Array(env, it->part);
        onChunk.Call({chunk, Napi::Number::New(env, it->attempt)});
      } catch (const Napi::Error &e) {
        // Whatever was thrown (possibly not an object) is kept in a holder array: references to
        // primitives are not available on every Node-API version.
        ctx->jsFailed.store(true);
        try {
          Napi::Array holder = Napi::Array::New(env, 1);
          holder.Set(uint32_t(0), e.Value());
          ctx->jsError = Napi::Persistent(holder.As<Napi::Object>());
        } catch (...) {
        }
      } catch (...) {
        ctx->jsFailed.store(true);
      }
    }
    ctx->inFlight.fetch_sub(1);
    return;
  }
  if (ctx->settled) return;
  ctx->settled = true;
  try {
    if (ctx->jsFailed.load()) {
      if (!ctx->jsError.IsEmpty())
        ctx->deferred.Reject(ctx->jsError.Value().Get(uint32_t(0)));
      else
        ctx->deferred.Reject(Napi::Error::New(env, "nftlink: dumpSetElementsStream(): onChunk threw").Value());
    } else if (it->type == StreamItem::Failed) {
      ctx->deferred.Reject(Napi::Error::New(env, it->error).Value());
    } else {
      Napi::Object r = Napi::Object::New(env);
      r.Set("generation", Napi::Number::New(env, it->generation));
      r.Set("attempt", Napi::Number::New(env, it->attempt));
      ctx->deferred.Resolve(r);
    }
  } catch (...) {
    // Only when the environment is being torn down; nothing is left to tell.
  }
}

class StreamSink : public PartSink {
 public:
  StreamSink(StreamTsfn &tsfn, StreamCtx *ctx) : tsfn_(tsfn), ctx_(ctx) {}
  bool idle() const override { return ctx_->inFlight.load() == 0; }
  void send(Writer &&part, uint32_t attempt) override {
    // onChunk threw: stop (netlinkRequest still drains the dump before the error comes back).
    if (ctx_->jsFailed.load()) throw std::runtime_error("nftlink: onChunk threw");
    auto *item = new StreamItem{StreamItem::Part, std::move(part), attempt, 0, {}};
    ctx_->inFlight.fetch_add(1);
    if (tsfn_.BlockingCall(item) != napi_ok) {
      ctx_->inFlight.fetch_sub(1);
      delete item;
      throw std::runtime_error("nftlink: the JS environment is shutting down");
    }
  }

 private:
  StreamTsfn &tsfn_;
  StreamCtx *ctx_;
};

class StreamDumpWorker : public Napi::AsyncWorker {
 public:
  StreamDumpWorker(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec, StreamTsfn tsfn, StreamCtx *ctx)
      : Napi::AsyncWorker(env), handle_(std::move(h)), ticket_(*handle_), spec_(std::move(spec)), tsfn_(tsfn), ctx_(ctx) {}

 private:
  void Execute() override {
    auto *final = new StreamItem{StreamItem::Failed, Writer(), 0, 0, {}};
    {
      std::unique_lock<std::mutex> lock(handle_->mu);
      ticket_.wait(*handle_, lock);
      try {
        if (handle_->closed.load() || !handle_->sock) {
          final->error = "nftlink: the handle is closed";
        } else {
          handle_->sock->drainStale();
          run(*handle_->sock, final);
        }
      } catch (...) {
        final->error = currentErrorMessage();
      }
      if (handle_->closed.load()) handle_->sock.reset();
      Ticket::done(*handle_);
    }
    if (tsfn_.BlockingCall(final) != napi_ok) delete final;
    tsfn_.Release();
  }
  void OnOK() override {}
  void OnError(const Napi::Error &) override {}

  void run(NlSocket &sock, StreamItem *final) {
    StreamSink sink(tsfn_, ctx_);
    Parts parts(sink, spec_.family, spec_.table, spec_.set);
    constexpr uint32_t kAttempts = 20;
    for (uint32_t attempt = 0; attempt < kAttempts; attempt++) {
      const uint32_t before = runGetGeneration(sock);
      parts.beginAttempt(attempt, before);
      Writer unused;
      uint32_t count = 0;
      Dumper d(sock, spec_, &parts);
      const bool clean = d.attempt(unused, &count);
      const uint32_t after = runGetGeneration(sock);
      if (clean && before == after) {
        final->type = StreamItem::Done;
        final->attempt = attempt;
        final->generation = before;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5 * (attempt + 1)));
    }
    throw std::runtime_error("nftlink: the ruleset kept changing during the dump (" + std::to_string(kAttempts) +
                             " attempts)");
  }

  std::shared_ptr<Handle> handle_;
  Ticket ticket_;
  DumpSpec spec_;
  StreamTsfn tsfn_;
  StreamCtx *ctx_;
};

}  // namespace

Napi::Promise startDump(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec) {
  auto *w = new DumpWorker(env, std::move(h), std::move(spec));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

Napi::Promise startDumpStream(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec, Napi::Function onChunk) {
  auto *ctx = new StreamCtx(env);
  Napi::Promise p = ctx->deferred.Promise();
  // Unbounded queue (the worker never blocks on JS), one thread; the finalizer frees the context once
  // the last item has been delivered.
  StreamTsfn tsfn = StreamTsfn::New(env, onChunk, "nftlink.dumpSetElementsStream", 0, 1, ctx,
                                    [](Napi::Env, void *, StreamCtx *c) { delete c; });
  auto *w = new StreamDumpWorker(env, std::move(h), std::move(spec), tsfn, ctx);
  w->Queue();
  return p;
}

}  // namespace nftlink
