#include "dump.h"

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

#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "wire.h"
#include "worker.h"

namespace nftlink {

// ---- request/reply loop ------------------------------------------------------------------------

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
  for (;;) {
    ssize_t n = mnl_socket_recvfrom(sock.mnl(), rb.data(), rb.size());
    if (n < 0) {
      const int e = errno;
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

namespace {

struct TableDel { void operator()(nftnl_table *p) const { nftnl_table_free(p); } };
struct ChainDel { void operator()(nftnl_chain *p) const { nftnl_chain_free(p); } };
struct RuleDel { void operator()(nftnl_rule *p) const { nftnl_rule_free(p); } };
struct SetDel { void operator()(nftnl_set *p) const { nftnl_set_free(p); } };

template <typename T>
T *checkAlloc(T *p, const char *what) {
  if (p == nullptr) throw std::runtime_error(std::string("nftlink: out of memory allocating a libnftnl ") + what);
  return p;
}

uint8_t familyOf(const nlmsghdr *nlh) {
  return static_cast<const nfgenmsg *>(mnl_nlmsg_get_payload(nlh))->nfgen_family;
}

// ---- writing objects back ----------------------------------------------------------------------

void writeOpHeader(Writer &w, uint8_t msgType, uint8_t kind, uint8_t family) {
  w.u8(msgType);
  w.u8(kind);
  w.u16(0);
  w.u8(family);
  w.u8(0);
  w.u8(0);
  w.u8(0);
}

// Emits u16 count + every attribute `get` returns for ids the spec can carry, skipping libnftnl's
// pointer-valued ones (their content goes out through the expression lists instead).
template <typename GetFn>
void writeAttrs(Writer &w, const ObjectSpec &spec, GetFn get) {
  const size_t countAt = w.size();
  w.u16(0);
  uint16_t n = 0;
  for (uint16_t id = 0; id < spec.count; id++) {
    const AttrKind k = spec.attrs[id].kind;
    if (k == AttrKind::Pointer || k == AttrKind::None) continue;
    uint32_t len = 0;
    const void *p = get(id, &len);
    if (p == nullptr) continue;
    if (k == AttrKind::Str) {
      // Trust the string, not the length: libnftnl 1.2.4's nftnl_chain_get_data(NFTNL_CHAIN_TYPE)
      // reports sizeof(uint32_t) ("filter" would come back as "fil").
      w.attr(id, p, uint32_t(strlen(static_cast<const char *>(p)) + 1));
    } else if (k == AttrKind::Devices) {
      // libnftnl hands back its NULL-terminated char* array; the wire carries the names back to back.
      std::string joined;
      for (const char *const *d = static_cast<const char *const *>(p); *d; d++) joined.append(*d).push_back('\0');
      if (joined.empty()) continue;
      w.attr(id, joined.data(), uint32_t(joined.size()));
    } else {
      w.attr(id, p, len);
    }
    n++;
  }
  w.patchU16(countAt, n);
}

void writeExprs(Writer &w, const std::vector<nftnl_expr *> &exprs, int depth);

void writeExpr(Writer &w, nftnl_expr *e, int depth) {
  const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
  if (name == nullptr) name = "";
  size_t nameLen = strlen(name);
  if (nameLen > 255) nameLen = 255;
  w.u8(uint8_t(nameLen));
  w.raw(name, nameLen);
  const ExprSpec *spec = findExpr(std::string_view(name, nameLen));
  const size_t countAt = w.size();
  w.u16(0);
  uint16_t n = 0;
  // flags is a u32 bitmask in libnftnl: ids stop at 31. An expression newer than our table still
  // dumps every attribute libnftnl reports.
  const uint16_t maxId = spec ? spec->count : 32;
  for (uint16_t id = NFTNL_EXPR_BASE; id < maxId && id < 32; id++) {
    if (spec && (spec->attrs[id].kind == AttrKind::Pointer || spec->attrs[id].kind == AttrKind::None)) continue;
    if (!nftnl_expr_is_set(e, id)) continue;
    uint32_t len = 0;
    const void *p = nftnl_expr_get(e, id, &len);
    if (p == nullptr) continue;
    if (spec && spec->attrs[id].kind == AttrKind::Str) len = uint32_t(strlen(static_cast<const char *>(p)) + 1);
    w.attr(id, p, len);
    n++;
  }
  w.patchU16(countAt, n);
  std::vector<nftnl_expr *> children;
  if (depth == 0 && spec && spec->children)
    nftnl_expr_expr_foreach(
        e,
        [](nftnl_expr *c, void *d) {
          static_cast<std::vector<nftnl_expr *> *>(d)->push_back(c);
          return 0;
        },
        &children);
  writeExprs(w, children, depth + 1);
}

void writeExprs(Writer &w, const std::vector<nftnl_expr *> &exprs, int depth) {
  w.u16(uint16_t(exprs.size() > 0xFFFF ? 0xFFFF : exprs.size()));
  for (size_t i = 0; i < exprs.size() && i < 0xFFFF; i++) writeExpr(w, exprs[i], depth);
}

int collectExpr(nftnl_expr *e, void *d) {
  static_cast<std::vector<nftnl_expr *> *>(d)->push_back(e);
  return 0;
}

struct SetRef {
  uint8_t family;
  std::string table;
  std::string name;
};

class Dumper {
 public:
  Dumper(NlSocket &sock, const DumpSpec &spec) : sock_(sock), spec_(spec) {}

  // One attempt; returns false if the kernel interrupted a dump (the ruleset changed under it).
  bool attempt(Writer &w, uint32_t *count) {
    count_ = 0;
    intr_ = false;
    w_ = &w;
    if (spec_.oneSet) {
      elements({spec_.family, spec_.table, spec_.set});
    } else {
      if (spec_.what & kDumpTables) tables();
      if (spec_.what & kDumpChains) chains();
      std::vector<SetRef> sets;
      if (spec_.what & (kDumpSets | kDumpElements)) sets = this->sets((spec_.what & kDumpSets) != 0);
      if (spec_.what & kDumpElements)
        for (const auto &s : sets) elements(s);
      if (spec_.what & kDumpRules) rules();
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
      std::unique_ptr<nftnl_table, TableDel> t(checkAlloc(nftnl_table_alloc(), "table"));
      if (nftnl_table_nlmsg_parse(nlh, t.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a table from the kernel");
      if (!tableMatches(nftnl_table_get_str(t.get(), NFTNL_TABLE_NAME))) return;
      writeOpHeader(*w_, kNewTable, kTable, familyOf(nlh));
      writeAttrs(*w_, objectSpec(kTable), [&](uint16_t id, uint32_t *len) {
        return nftnl_table_is_set(t.get(), id) ? nftnl_table_get_data(t.get(), id, len) : nullptr;
      });
      w_->u16(0);
      count_++;
    });
  }

  void chains() {
    run("chain", request(NFT_MSG_GETCHAIN, spec_.family), [&](const nlmsghdr *nlh) {
      std::unique_ptr<nftnl_chain, ChainDel> c(checkAlloc(nftnl_chain_alloc(), "chain"));
      if (nftnl_chain_nlmsg_parse(nlh, c.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a chain from the kernel");
      if (!tableMatches(nftnl_chain_get_str(c.get(), NFTNL_CHAIN_TABLE))) return;
      writeOpHeader(*w_, kNewChain, kChain, familyOf(nlh));
      writeAttrs(*w_, objectSpec(kChain), [&](uint16_t id, uint32_t *len) {
        return nftnl_chain_is_set(c.get(), id) ? nftnl_chain_get_data(c.get(), id, len) : nullptr;
      });
      w_->u16(0);
      count_++;
    });
  }

  std::vector<SetRef> sets(bool emit) {
    std::vector<SetRef> out;
    run("set", request(NFT_MSG_GETSET, spec_.family), [&](const nlmsghdr *nlh) {
      std::unique_ptr<nftnl_set, SetDel> s(checkAlloc(nftnl_set_alloc(), "set"));
      if (nftnl_set_nlmsg_parse(nlh, s.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a set from the kernel");
      const char *table = nftnl_set_get_str(s.get(), NFTNL_SET_TABLE);
      const char *name = nftnl_set_get_str(s.get(), NFTNL_SET_NAME);
      if (!tableMatches(table) || !name || !table) return;
      out.push_back({familyOf(nlh), table, name});
      if (!emit) return;
      writeOpHeader(*w_, kNewSet, kSet, familyOf(nlh));
      writeAttrs(*w_, objectSpec(kSet), [&](uint16_t id, uint32_t *len) {
        return nftnl_set_is_set(s.get(), id) ? nftnl_set_get_data(s.get(), id, len) : nullptr;
      });
      std::vector<nftnl_expr *> exprs;
      nftnl_set_expr_foreach(s.get(), collectExpr, &exprs);
      writeExprs(*w_, exprs, 0);
      count_++;
    });
    return out;
  }

  void elements(const SetRef &ref) {
    nlmsghdr *req = request(NFT_MSG_GETSETELEM, ref.family);
    {
      std::unique_ptr<nftnl_set, SetDel> s(checkAlloc(nftnl_set_alloc(), "set"));
      nftnl_set_set_str(s.get(), NFTNL_SET_TABLE, ref.table.c_str());
      nftnl_set_set_str(s.get(), NFTNL_SET_NAME, ref.name.c_str());
      nftnl_set_elems_nlmsg_build_payload(req, s.get());  // no elements attached: names the set only
    }
    writeOpHeader(*w_, kNewSetElem, kElements, ref.family);
    w_->u16(2);
    w_->attr(0 /*NFTNL_SET_TABLE*/, ref.table.c_str(), uint32_t(ref.table.size() + 1));
    w_->attr(1 /*NFTNL_SET_NAME*/, ref.name.c_str(), uint32_t(ref.name.size() + 1));
    w_->u16(0);
    const size_t countAt = w_->size();
    w_->u32(0);
    // Kernel fact (seen on 6.18): a hash set's element dump resumes each netlink dump call by skipping
    // the elements already sent, and the rhashtable may be resized (deferred work, e.g. right after a
    // large insert) between calls. The walk order then changes and the dump repeats some elements and
    // misses as many others, without NLM_F_DUMP_INTR. A repeated element identity means exactly that:
    // treat it as an interrupted dump and retry.
    struct Ctx {
      Writer *w;
      uint32_t n;
      std::unordered_set<std::string> seen;
      bool repeated;
    } ctx{w_, 0, {}, false};
    run("set element", req, [&](const nlmsghdr *nlh) {
      // One libnftnl set per message, written out and freed at once: a 200k-element set never sits in
      // libnftnl's lists as a whole.
      std::unique_ptr<nftnl_set, SetDel> s(checkAlloc(nftnl_set_alloc(), "set"));
      if (nftnl_set_elems_nlmsg_parse(nlh, s.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse set elements from the kernel");
      nftnl_set_elem_foreach(
          s.get(),
          [](nftnl_set_elem *e, void *d) {
            auto *c = static_cast<Ctx *>(d);
            writeAttrs(*c->w, elemSpec(), [&](uint16_t id, uint32_t *len) -> const void * {
              return nftnl_set_elem_is_set(e, id) ? nftnl_set_elem_get(e, id, len) : nullptr;
            });
            std::vector<nftnl_expr *> exprs;
            nftnl_set_elem_expr_foreach(e, collectExpr, &exprs);
            writeExprs(*c->w, exprs, 1);
            c->n++;
            if (!c->repeated) {
              std::string id;
              for (uint16_t a : {NFTNL_SET_ELEM_KEY, NFTNL_SET_ELEM_KEY_END, NFTNL_SET_ELEM_FLAGS}) {
                uint32_t len = 0;
                const void *p = nftnl_set_elem_is_set(e, a) ? nftnl_set_elem_get(e, a, &len) : nullptr;
                id.push_back(char(len));
                if (p) id.append(static_cast<const char *>(p), len);
              }
              if (!c->seen.insert(std::move(id)).second) c->repeated = true;
            }
            return 0;
          },
          &ctx);
    });
    w_->patchU32(countAt, ctx.n);
    if (ctx.repeated) intr_ = true;
    count_++;
  }

  void rules() {
    nlmsghdr *req = request(NFT_MSG_GETRULE, spec_.family);
    if (spec_.hasTable) {
      // nf_tables_dump_rules_start() filters by table name without looking it up (no ENOENT).
      std::unique_ptr<nftnl_rule, RuleDel> r(checkAlloc(nftnl_rule_alloc(), "rule"));
      nftnl_rule_set_str(r.get(), NFTNL_RULE_TABLE, spec_.table.c_str());
      nftnl_rule_nlmsg_build_payload(req, r.get());
    }
    run("rule", req, [&](const nlmsghdr *nlh) {
      std::unique_ptr<nftnl_rule, RuleDel> r(checkAlloc(nftnl_rule_alloc(), "rule"));
      if (nftnl_rule_nlmsg_parse(nlh, r.get()) < 0)
        throw std::runtime_error("nftlink: libnftnl could not parse a rule from the kernel");
      if (!tableMatches(nftnl_rule_get_str(r.get(), NFTNL_RULE_TABLE))) return;
      writeOpHeader(*w_, kNewRule, kRule, familyOf(nlh));
      writeAttrs(*w_, objectSpec(kRule), [&](uint16_t id, uint32_t *len) {
        return nftnl_rule_is_set(r.get(), id) ? nftnl_rule_get_data(r.get(), id, len) : nullptr;
      });
      std::vector<nftnl_expr *> exprs;
      nftnl_expr_foreach(r.get(), collectExpr, &exprs);
      writeExprs(*w_, exprs, 0);
      count_++;
    });
  }

  NlSocket &sock_;
  const DumpSpec &spec_;
  Writer *w_ = nullptr;
  uint32_t count_ = 0;
  bool intr_ = false;
  std::vector<uint8_t> req_;
};

}  // namespace

std::vector<uint8_t> runDump(NlSocket &sock, const DumpSpec &spec) {
  // The ruleset may change while we walk it (several dumps, each its own netlink dump). Bracket the
  // walk with GETGEN and start over when the generation moved or a dump was flagged interrupted.
  constexpr int kAttempts = 20;
  for (int attempt = 0; attempt < kAttempts; attempt++) {
    const uint32_t before = runGetGeneration(sock);
    Writer w;
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
      return std::move(w.buffer());
    }
    // Give whatever moved (a commit, a deferred rhashtable resize) a moment to settle.
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * (attempt + 1)));
  }
  throw std::runtime_error("nftlink: the ruleset kept changing during the dump (" + std::to_string(kAttempts) +
                           " attempts)");
}

namespace {

class DumpWorker : public PromiseWorker {
 public:
  DumpWorker(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec)
      : PromiseWorker(env, std::move(h)), spec_(std::move(spec)) {}

 protected:
  void run(NlSocket &sock) override { out_ = runDump(sock, spec_); }
  Napi::Value result(Napi::Env env) override {
    Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, out_.size());
    if (!out_.empty()) std::memcpy(ab.Data(), out_.data(), out_.size());
    return Napi::Uint8Array::New(env, out_.size(), ab, 0);
  }

 private:
  DumpSpec spec_;
  std::vector<uint8_t> out_;
};

}  // namespace

Napi::Promise startDump(Napi::Env env, std::shared_ptr<Handle> h, DumpSpec spec) {
  auto *w = new DumpWorker(env, std::move(h), std::move(spec));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

}  // namespace nftlink
