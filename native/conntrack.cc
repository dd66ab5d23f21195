// conntrackDelete (native/README.md): one dump of the conntrack table per protocol the filters name,
// matched in user space, then the matches deleted by their original tuple and id, many deletes per
// sendmsg, every one acknowledged.
#include "conntrack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "netlink-request.h"
#include "worker.h"

namespace nftlink {

namespace {

// The kernel's CTA_FILTER flag bits (nf_conntrack_netlink.c, CTA_FILTER_F_CTA_*; the values
// libnetfilter_conntrack sends). Only the protocol number is used.
constexpr uint32_t kFilterProtoNum = 1u << 3;

std::string errnoText(int e) { return std::string(strerror(e)) + " (errno " + std::to_string(e) + ")"; }

// libmnl's iteration macros assign void* to the cursor (C only); these are the same walks for C++.
template <typename F>
void eachNested(const nlattr *nest, F f) {
  const auto *a = static_cast<const nlattr *>(mnl_attr_get_payload(nest));
  int left = int(mnl_attr_get_payload_len(nest));
  for (; mnl_attr_ok(a, left); a = mnl_attr_next(a)) {
    left -= int(MNL_ALIGN(a->nla_len));
    f(a);
  }
}

template <typename F>
void eachAttr(const nlmsghdr *nlh, size_t offset, F f) {
  const auto *a = static_cast<const nlattr *>(mnl_nlmsg_get_payload_offset(nlh, offset));
  int left = int(nlh->nlmsg_len) - int(MNL_ALIGN(sizeof(nlmsghdr))) - int(MNL_ALIGN(offset));
  for (; mnl_attr_ok(a, left); a = mnl_attr_next(a)) {
    left -= int(MNL_ALIGN(a->nla_len));
    f(a);
  }
}

struct Tuple {
  const uint8_t *src = nullptr;  // address bytes (4 or 16), inside the message
  const uint8_t *dst = nullptr;
  uint8_t proto = 0;
  bool hasProto = false;
  uint16_t sport = 0, dport = 0;  // network order
  bool hasPorts = false;
};

// Walks a CTA_TUPLE_* nest. Attribute lengths are checked before any read.
void parseTuple(const nlattr *nest, uint8_t family, Tuple *t) {
  eachNested(nest, [&](const nlattr *a) {
    const uint16_t type = mnl_attr_get_type(a);
    if (type == CTA_TUPLE_IP) {
      eachNested(a, [&](const nlattr *ip) {
        const uint16_t it = mnl_attr_get_type(ip);
        const uint16_t len = mnl_attr_get_payload_len(ip);
        const auto *p = static_cast<const uint8_t *>(mnl_attr_get_payload(ip));
        if (family == NFPROTO_IPV4 && len == 4) {
          if (it == CTA_IP_V4_SRC) t->src = p;
          if (it == CTA_IP_V4_DST) t->dst = p;
        } else if (family == NFPROTO_IPV6 && len == 16) {
          if (it == CTA_IP_V6_SRC) t->src = p;
          if (it == CTA_IP_V6_DST) t->dst = p;
        }
      });
    } else if (type == CTA_TUPLE_PROTO) {
      bool s = false, d = false;
      eachNested(a, [&](const nlattr *pa) {
        const uint16_t pt = mnl_attr_get_type(pa);
        const uint16_t len = mnl_attr_get_payload_len(pa);
        if (pt == CTA_PROTO_NUM && len >= 1) {
          t->proto = mnl_attr_get_u8(pa);
          t->hasProto = true;
        } else if (pt == CTA_PROTO_SRC_PORT && len >= 2) {
          t->sport = mnl_attr_get_u16(pa);
          s = true;
        } else if (pt == CTA_PROTO_DST_PORT && len >= 2) {
          t->dport = mnl_attr_get_u16(pa);
          d = true;
        }
      });
      t->hasPorts = s && d;
    }
  });
}

// A flow to delete: its CTA_TUPLE_ORIG attribute copied verbatim (header included), its id and zone.
struct Victim {
  size_t off = 0;
  uint16_t len = 0;
  bool hasId = false;
  uint32_t id = 0;  // network order
  bool hasZone = false;
  uint16_t zone = 0;  // network order
};

uint64_t key(uint8_t proto, uint16_t port) { return (uint64_t(proto) << 16) | port; }

class Matcher {
 public:
  explicit Matcher(const CtSpec &spec) : spec_(spec), alen_(spec.family == NFPROTO_IPV4 ? 4 : 16) {
    for (size_t i = 0; i < spec.filters.size(); i++) {
      const CtFilter &f = spec.filters[i];
      index_[key(f.protocol, f.dstPort)].push_back(i);
    }
  }

  // Called for every message of the dump.
  void onMessage(const nlmsghdr *nlh, uint8_t proto, CtResult *res) {
    if (nlh->nlmsg_type != ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW)) return;
    if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(nfgenmsg)) return;
    const auto *nfg = static_cast<const nfgenmsg *>(mnl_nlmsg_get_payload(nlh));
    if (nfg->nfgen_family != spec_.family) return;
    const nlattr *orig = nullptr, *reply = nullptr;
    Victim v;
    eachAttr(nlh, sizeof(nfgenmsg), [&](const nlattr *a) {
      switch (mnl_attr_get_type(a)) {
        case CTA_TUPLE_ORIG: orig = a; break;
        case CTA_TUPLE_REPLY: reply = a; break;
        case CTA_ID:
          if (mnl_attr_get_payload_len(a) >= 4) {
            std::memcpy(&v.id, mnl_attr_get_payload(a), 4);
            v.hasId = true;
          }
          break;
        case CTA_ZONE:
          if (mnl_attr_get_payload_len(a) >= 2) {
            std::memcpy(&v.zone, mnl_attr_get_payload(a), 2);
            v.hasZone = v.zone != 0;
          }
          break;
        default: break;
      }
    });
    if (!orig || !reply) return;
    Tuple o, r;
    parseTuple(orig, spec_.family, &o);
    parseTuple(reply, spec_.family, &r);
    if (!o.hasProto || !o.hasPorts || !o.dst || !r.src) return;
    if (proto != 0 && o.proto != proto) return;  // the kernel ignored CTA_FILTER (older than 5.8)
    res->scanned++;
    auto it = index_.find(key(o.proto, ntohs(o.dport)));
    if (it == index_.end()) return;
    bool hit = false;
    for (size_t i : it->second) {
      const CtFilter &f = spec_.filters[i];
      if (f.hasDst && std::memcmp(f.dst, o.dst, alen_) != 0) continue;
      if (f.hasReplySrc && std::memcmp(f.replySrc, r.src, alen_) != 0) continue;
      if (f.notNatted && std::memcmp(o.dst, r.src, alen_) != 0) continue;
      hit = true;
      break;
    }
    if (!hit) return;
    const size_t total = mnl_attr_get_len(orig);  // header + payload, unpadded
    v.off = arena_.size();
    v.len = uint16_t(total);
    arena_.insert(arena_.end(), reinterpret_cast<const uint8_t *>(orig), reinterpret_cast<const uint8_t *>(orig) + total);
    victims_.push_back(v);
  }

  const std::vector<Victim> &victims() const { return victims_; }
  const std::vector<uint8_t> &arena() const { return arena_; }

 private:
  const CtSpec &spec_;
  const size_t alen_;
  std::unordered_map<uint64_t, std::vector<size_t>> index_;
  std::vector<uint8_t> arena_;
  std::vector<Victim> victims_;
};

// One dump; proto 0 = every protocol of the family (no CTA_FILTER). Returns the kernel's errno (0: done).
int dumpOnce(NlSocket &sock, const CtSpec &spec, uint8_t proto, Matcher &m, CtResult *res) {
  char buf[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = sock.takeSeq(1);
  auto *nfg = static_cast<nfgenmsg *>(mnl_nlmsg_put_extra_header(nlh, sizeof(nfgenmsg)));
  nfg->nfgen_family = spec.family;  // the kernel dumps only this L3 family
  nfg->version = NFNETLINK_V0;
  nfg->res_id = 0;
  if (proto != 0) {
    nlattr *t = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
    nlattr *p = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
    mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
    mnl_attr_nest_end(nlh, p);
    mnl_attr_nest_end(nlh, t);
    nlattr *f = mnl_attr_nest_start(nlh, CTA_FILTER);
    mnl_attr_put_u32(nlh, CTA_FILTER_ORIG_FLAGS, kFilterProtoNum);
    mnl_attr_put_u32(nlh, CTA_FILTER_REPLY_FLAGS, 0);
    mnl_attr_nest_end(nlh, f);
  }
  RequestResult r = netlinkRequest(sock, "conntrack dump", nlh, true,
                                   [&](const nlmsghdr *msg) { m.onMessage(msg, proto, res); });
  return r.error;
}

void deleteVictims(NlSocket &sock, const CtSpec &spec, const Matcher &m, CtResult *res) {
  const auto &vs = m.victims();
  const auto &arena = m.arena();
  constexpr size_t kChunkBytes = 32768;
  constexpr size_t kChunkMsgs = 256;
  std::vector<uint8_t> out(kChunkBytes + MNL_SOCKET_BUFFER_SIZE);
  std::vector<uint8_t> rb(65536);
  // An ack (CAP_ACK: header + nlmsgerr) costs well under 1 KiB of receive buffer each.
  sock.ensureRcvBuf(kChunkMsgs * 1024 + 65536);
  size_t i = 0;
  while (i < vs.size()) {
    size_t used = 0;
    const uint32_t base = sock.takeSeq(0);
    uint32_t n = 0;
    while (i < vs.size() && n < kChunkMsgs && used < kChunkBytes) {
      const Victim &v = vs[i];
      nlmsghdr *nlh = mnl_nlmsg_put_header(out.data() + used);
      nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
      nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
      nlh->nlmsg_seq = sock.takeSeq(1);
      auto *nfg = static_cast<nfgenmsg *>(mnl_nlmsg_put_extra_header(nlh, sizeof(nfgenmsg)));
      nfg->nfgen_family = spec.family;
      nfg->version = NFNETLINK_V0;
      nfg->res_id = 0;
      // The original tuple exactly as the kernel reported it (a nest, so its type carries the flag).
      const auto *orig = reinterpret_cast<const nlattr *>(arena.data() + v.off);
      mnl_attr_put(nlh, mnl_attr_get_type(orig) | NLA_F_NESTED, mnl_attr_get_payload_len(orig),
                   mnl_attr_get_payload(orig));
      if (v.hasId) mnl_attr_put(nlh, CTA_ID, 4, &v.id);  // only this flow, not a newer one with the same tuple
      if (v.hasZone) mnl_attr_put(nlh, CTA_ZONE, 2, &v.zone);
      used += nlh->nlmsg_len;
      i++;
      n++;
    }
    if (mnl_socket_sendto(sock.mnl(), out.data(), used) < 0)
      throw std::runtime_error("nftlink: sending conntrack deletes failed: " + errnoText(errno));
    uint32_t answered = 0;
    while (answered < n) {
      ssize_t got = mnl_socket_recvfrom(sock.mnl(), rb.data(), rb.size());
      if (got < 0) {
        const int e = errno;
        if (e == EINTR) continue;
        if (e == EAGAIN || e == EWOULDBLOCK)
          throw std::runtime_error("nftlink: no answer to conntrack deletes within 30 s");
        if (e == ENOBUFS)
          throw std::runtime_error("nftlink: conntrack delete acknowledgements overflowed the receive buffer");
        throw std::runtime_error("nftlink: receiving conntrack delete acknowledgements failed: " + errnoText(e));
      }
      int len = int(got);
      for (auto *nlh = reinterpret_cast<const nlmsghdr *>(rb.data()); mnl_nlmsg_ok(nlh, len);
           nlh = mnl_nlmsg_next(nlh, &len)) {
        if (nlh->nlmsg_type != NLMSG_ERROR) continue;
        if (nlh->nlmsg_seq - base >= n) continue;  // not one of this chunk's
        if (nlh->nlmsg_pid != 0 && nlh->nlmsg_pid != sock.portid()) continue;
        answered++;
        int code = EPROTO;
        if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(nlmsgerr)) {
          const auto *err = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh));
          code = err->error < 0 ? -err->error : err->error;
        }
        if (code == 0) {
          res->deleted++;
        } else if (code == ENOENT) {
          res->vanished++;
        } else {
          res->failed++;
          if (res->errors.size() < 64) res->errors.push_back(code);
        }
      }
    }
  }
}

}  // namespace

CtResult runConntrackDelete(NlSocket &sock, const CtSpec &spec) {
  CtResult res;
  if (spec.filters.empty()) return res;
  Matcher m(spec);
  std::vector<uint8_t> protos;
  for (const CtFilter &f : spec.filters)
    if (std::find(protos.begin(), protos.end(), f.protocol) == protos.end()) protos.push_back(f.protocol);
  for (uint8_t p : protos) {
    int e = dumpOnce(sock, spec, p, m, &res);
    if (e == EINVAL || e == EOPNOTSUPP) {
      // A kernel that refuses this CTA_FILTER: dump the family unfiltered (the matcher checks the protocol).
      e = dumpOnce(sock, spec, 0, m, &res);
      if (e == 0) break;  // that one dump covered every protocol
    }
    if (e != 0) throw std::runtime_error("nftlink: the kernel refused the conntrack dump: " + errnoText(e));
  }
  deleteVictims(sock, spec, m, &res);
  return res;
}

namespace {

class ConntrackWorker : public PromiseWorker {
 public:
  ConntrackWorker(Napi::Env env, std::shared_ptr<Handle> h, CtSpec spec)
      : PromiseWorker(env, std::move(h)), spec_(std::move(spec)) {}

 protected:
  void run(NlSocket &sock) override { res_ = runConntrackDelete(sock, spec_); }
  Napi::Value result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("scanned", Napi::Number::New(env, res_.scanned));
    o.Set("deleted", Napi::Number::New(env, res_.deleted));
    o.Set("vanished", Napi::Number::New(env, res_.vanished));
    o.Set("failed", Napi::Number::New(env, res_.failed));
    Napi::Array errs = Napi::Array::New(env, res_.errors.size());
    for (size_t i = 0; i < res_.errors.size(); i++) errs.Set(uint32_t(i), Napi::Number::New(env, res_.errors[i]));
    o.Set("errors", errs);
    return o;
  }

 private:
  CtSpec spec_;
  CtResult res_;
};

}  // namespace

Napi::Promise startConntrackDelete(Napi::Env env, std::shared_ptr<Handle> h, CtSpec spec) {
  auto *w = new ConntrackWorker(env, std::move(h), std::move(spec));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

}  // namespace nftlink
