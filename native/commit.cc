#include "commit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "echo.h"
#include "nftnl-objects.h"
#include "wire.h"
#include "worker.h"

namespace nftlink {

namespace {

[[noreturn]] void oom(const std::string &what) { throw std::runtime_error("nftlink: out of memory while " + what); }

// Every value goes through a zeroed scratch buffer larger than any libnftnl field: the expression
// setters memcpy sizeof(field) regardless of the length they are given, so they must never read past
// the value (the sizes are already checked exactly; this is the second line of defence).
struct Scratch {
  alignas(16) uint8_t bytes[kStrMax + 16];
  const void *copy(const AttrView &a) {
    std::memset(bytes, 0, sizeof bytes);
    std::memcpy(bytes, a.data, a.len);  // a.len <= kStrMax for every kind that reaches here
    return bytes;
  }
};

std::string opLabel(size_t op) { return "operation " + std::to_string(op); }

// An xtables match/target's info: libnftnl 1.2.4 keeps the pointer it is given and free()s it with
// the expression (src/expr/match.c, target.c), so it gets a malloc'd copy of its own.
void setXtInfo(nftnl_expr *e, const AttrView &a, const ExprView &ev, size_t op) {
  void *info = std::malloc(a.len);
  if (info == nullptr) oom(opLabel(op) + ": copying " + ev.spec->name + " info");
  std::memcpy(info, a.data, a.len);
  if (nftnl_expr_set(e, a.id, info, a.len) < 0) {
    std::free(info);  // refused: libnftnl did not take it
    throw std::runtime_error("nftlink: " + opLabel(op) + ": libnftnl refused " + ev.spec->name + " info");
  }
}

ExprPtr makeExpr(const ExprView &ev, size_t op) {
  ExprPtr e(nftnl_expr_alloc(ev.spec->name));
  if (!e)
    throw std::runtime_error("nftlink: " + opLabel(op) + ": libnftnl cannot allocate expression \"" +
                             ev.spec->name + "\"");
  Scratch s;
  for (const auto &a : ev.attrs) {
    if (a.kind == AttrKind::XtInfo) {
      setXtInfo(e.get(), a, ev, op);
      continue;
    }
    if (nftnl_expr_set(e.get(), a.id, s.copy(a), a.len) < 0)
      throw std::runtime_error("nftlink: " + opLabel(op) + ": libnftnl refused " + ev.spec->name + " attribute " +
                               std::to_string(a.id) + " (" + ev.spec->attrs[a.id].name + ")");
  }
  for (const auto &c : ev.children) {
    ExprPtr child = makeExpr(c, op);
    nftnl_expr_add_expr(e.get(), NFTNL_EXPR_DYNSET_EXPRESSIONS, child.release());
  }
  return e;
}

// Chain NFTNL_CHAIN_DEVICES takes a NULL-terminated char* array (libnftnl strdup()s each name).
std::vector<const char *> deviceArray(const AttrView &a) {
  std::vector<const char *> v;
  const char *p = reinterpret_cast<const char *>(a.data);
  // strnlen: never past the attribute, even if the bytes were not what the reader checked.
  for (uint32_t i = 0; i < a.len;) {
    const size_t l = strnlen(p + i, a.len - i);
    if (l == a.len - i) break;
    v.push_back(p + i);
    i += uint32_t(l) + 1;
  }
  v.push_back(nullptr);
  return v;
}

template <typename Obj, typename SetFn>
void applyAttrs(Obj *o, const std::vector<AttrView> &attrs, SetFn set, const char *kind, size_t op) {
  Scratch s;
  for (const auto &a : attrs) {
    int rc;
    if (a.kind == AttrKind::Devices) {
      auto arr = deviceArray(a);
      rc = set(o, a.id, arr.data(), 0);
    } else {
      rc = set(o, a.id, s.copy(a), a.len);
    }
    if (rc < 0)
      throw std::runtime_error("nftlink: " + opLabel(op) + ": libnftnl could not set " + kind + " attribute " +
                               std::to_string(a.id) + " (out of memory)");
  }
}

// libnftnl keeps a named object's typed attributes in its type's part of a union, and drops them
// when the type is not known yet: NFTNL_OBJ_TYPE goes first. nftnl_obj_set_data returns nothing
// (1.2.4); the strings it strdup()s are checked after.
ObjPtr makeObj(const OpView &ov, size_t op) {
  ObjPtr o(checkAlloc(nftnl_obj_alloc(), "object"));
  Scratch s;
  for (const auto &a : ov.attrs)
    if (a.id == NFTNL_OBJ_TYPE) nftnl_obj_set_data(o.get(), a.id, s.copy(a), a.len);
  for (const auto &a : ov.attrs)
    if (a.id != NFTNL_OBJ_TYPE) nftnl_obj_set_data(o.get(), a.id, s.copy(a), a.len);
  for (uint16_t id : {NFTNL_OBJ_TABLE, NFTNL_OBJ_NAME})
    if (nftnl_obj_is_set(o.get(), id) && nftnl_obj_get_str(o.get(), id) == nullptr) oom(opLabel(op) + ": setting an object's name");
  return o;
}

SetPtr makeSet(const OpView &ov, size_t op) {
  SetPtr s(checkAlloc(nftnl_set_alloc(), "set"));
  applyAttrs(s.get(), ov.attrs, nftnl_set_set_data, "set", op);
  return s;
}

ElemPtr makeElem(const ElemView &ev, size_t op, Scratch &s) {
  ElemPtr e(checkAlloc(nftnl_set_elem_alloc(), "set element"));
  for (uint16_t i = 0; i < ev.attrCount; i++) {
    const AttrView &a = ev.attrs[i];
    if (nftnl_set_elem_set(e.get(), a.id, s.copy(a), a.len) < 0)
      throw std::runtime_error("nftlink: " + opLabel(op) + ": libnftnl could not set element attribute " +
                               std::to_string(a.id) + " (out of memory)");
  }
  for (const auto &x : ev.exprs) nftnl_set_elem_add_expr(e.get(), makeExpr(x, op).release());
  return e;
}

}  // namespace

// ---- the batch ---------------------------------------------------------------------------------

// The kernel reads an attribute length as u16, so a NFTA_SET_ELEM_LIST_ELEMENTS nest must stay
// below 64 KiB (libmnl's mnl_attr_nest_end would silently truncate it).
constexpr size_t kNestLimit = 0xFFFF - 3;
// Room reserved for one element message: headers + set naming attributes (< 1 KiB), the nest limit,
// and one element that overflows it before being rolled back.
constexpr size_t kElemMsgReserve = 1024 + 2 * 260 + kNestLimit + kElemBoundMax + 4096;

struct MsgRec {
  int32_t op;         // -1 for BEGIN/END
  int32_t firstElem;  // -1 unless an element message
  bool echo;          // a NEWRULE sent with NLM_F_ECHO: the kernel echoes it back on commit
  size_t off;         // offset of the message in the batch buffer
};

// BATCH_BEGIN's room at the head of the buffer: 20 bytes, 28 with NFNL_BATCH_GENID. Whether it
// carries the generation is known only when the batch is sent (a streamed commit's parts are built
// before), so BEGIN is written then, ending where the first operation's message starts, and the
// batch is sent from BEGIN's first byte.
constexpr size_t kBeginRoom = 32;

// The messages of one batch, in one buffer, each with the record that maps the kernel's replies
// back to it. Sequence numbers are message indices (BEGIN is 0) until send() rebases them onto
// numbers the socket hands out.
class Batch {
 public:
  // `capacity`: a first guess at the batch size. The buffer is malloc'd and grown with realloc,
  // never zero-filled: pages that are reserved but not written are not resident.
  explicit Batch(size_t capacity) {
    grow(capacity + kBeginRoom);
    used_ = kBeginRoom;
    recs_.push_back({-1, -1, false, 0});  // BEGIN, written by begin()
  }
  ~Batch() { std::free(buf_); }
  Batch(const Batch &) = delete;
  Batch &operator=(const Batch &) = delete;

  char *reserve(size_t n) {
    if (cap_ - used_ < n) grow(used_ + n + (used_ + n) / 2);
    return reinterpret_cast<char *>(buf_ + used_);
  }
  uint32_t nextSeq() const { return baseSeq_ + uint32_t(recs_.size()); }
  nlmsghdr *at(size_t off) { return reinterpret_cast<nlmsghdr *>(buf_ + off); }
  const nlmsghdr *at(size_t off) const { return reinterpret_cast<const nlmsghdr *>(buf_ + off); }
  // Registers the message just written at the tail.
  void finish(int32_t op, int32_t firstElem, size_t reserved) {
    nlmsghdr *nlh = at(used_);
    if (nlh->nlmsg_len > reserved)  // the bounds in wire.cc are wrong: memory is already corrupt
      throw std::logic_error("nftlink: internal error: message of " + std::to_string(nlh->nlmsg_len) +
                             " bytes overran its " + std::to_string(reserved) + "-byte reservation");
    // wire.cc lets NLM_F_ECHO through on NEWRULE only.
    const bool echo = (nlh->nlmsg_flags & NLM_F_ECHO) != 0;
    recs_.push_back({op, firstElem, echo, used_});
    echoes_ += echo ? 1 : 0;
    used_ += MNL_ALIGN(nlh->nlmsg_len);
  }
  // The batch as sent: from BEGIN's first byte to the end of the last message.
  const uint8_t *wire() const { return buf_ + recs_[0].off; }
  size_t wireLen() const { return used_ - recs_[0].off; }
  const std::vector<MsgRec> &recs() const { return recs_; }
  // The messages whose record says the kernel will echo them (one per rule asking for its handle).
  size_t echoes() const { return echoes_; }
  // The record of the message the kernel answers on `seq`, or nullptr for a number we did not send.
  const MsgRec *recOf(uint32_t seq) const {
    const uint32_t idx = seq - baseSeq_;
    return idx < recs_.size() ? &recs_[idx] : nullptr;
  }

  // BATCH_BEGIN, in the room kept for it at the head.
  void begin(bool withGenid, uint32_t genid) {
    alignas(4) char tmp[kBeginRoom];
    nlmsghdr *nlh = batchHeader(tmp, NFNL_MSG_BATCH_BEGIN, baseSeq_);
    // Compare-and-swap: the kernel (4.19+) answers -ERESTART on BEGIN if the generation moved on.
    if (withGenid) mnl_attr_put_u32(nlh, NFNL_BATCH_GENID, htonl(genid));
    const size_t len = MNL_ALIGN(nlh->nlmsg_len);
    recs_[0].off = kBeginRoom - len;
    std::memcpy(buf_ + recs_[0].off, tmp, len);
  }
  // BATCH_END, after the last operation.
  void end() {
    const size_t reserved = 64;
    batchHeader(reserve(reserved), NFNL_MSG_BATCH_END, nextSeq());
    finish(-1, -1, reserved);
  }
  // Renumbers every message from `base` on (the socket's next free sequence number); after begin().
  void rebase(uint32_t base) {
    for (size_t i = 0; i < recs_.size(); i++) at(recs_[i].off)->nlmsg_seq = base + uint32_t(i);
    baseSeq_ = base;
  }

 private:
  static nlmsghdr *batchHeader(char *p, uint16_t type, uint32_t seq) {
    nlmsghdr *nlh = mnl_nlmsg_put_header(p);
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    nlh->nlmsg_seq = seq;
    auto *nfg = static_cast<nfgenmsg *>(mnl_nlmsg_put_extra_header(nlh, sizeof(nfgenmsg)));
    nfg->nfgen_family = AF_UNSPEC;
    nfg->version = NFNETLINK_V0;
    // nfnetlink_rcv_batch() picks the subsystem from BEGIN's res_id.
    nfg->res_id = htons(NFNL_SUBSYS_NFTABLES);
    return nlh;
  }
  void grow(size_t want) {
    void *p = std::realloc(buf_, want);
    if (p == nullptr) oom("growing the batch buffer to " + std::to_string(want) + " bytes");
    buf_ = static_cast<uint8_t *>(p);
    cap_ = want;
  }
  uint8_t *buf_ = nullptr;
  size_t cap_ = 0;
  size_t used_ = 0;
  std::vector<MsgRec> recs_;
  size_t echoes_ = 0;
  uint32_t baseSeq_ = 0;
};

namespace {

// Walks every attribute of a built message and checks each nest's length covers exactly its
// children: a u16 nest length that wrapped (an oversized rule) shows up as a mismatch.
bool nestsConsistent(const uint8_t *p, size_t len, int depth) {
  size_t off = 0;
  while (off < len) {
    if (len - off < sizeof(nlattr)) return false;
    const auto *a = reinterpret_cast<const nlattr *>(p + off);
    if (a->nla_len < sizeof(nlattr) || a->nla_len > len - off) return false;
    if ((a->nla_type & NLA_F_NESTED) && depth < 16 &&
        !nestsConsistent(p + off + NLA_HDRLEN, a->nla_len - NLA_HDRLEN, depth + 1))
      return false;
    off += NLA_ALIGN(a->nla_len);
  }
  return off == NLA_ALIGN(len) || off == len;
}

void buildObjectMsg(Batch &b, const OpView &ov, size_t opIndex) {
  const size_t reserved = ov.bound + 64;
  char *p = b.reserve(reserved);
  nlmsghdr *nlh = nftnl_nlmsg_build_hdr(p, ov.msgType, ov.family, ov.nlFlags, b.nextSeq());
  switch (ov.kind) {
    case kTable: {
      TablePtr t(checkAlloc(nftnl_table_alloc(), "table"));
      applyAttrs(t.get(), ov.attrs, nftnl_table_set_data, "table", opIndex);
      nftnl_table_nlmsg_build_payload(nlh, t.get());
      break;
    }
    case kChain: {
      ChainPtr c(checkAlloc(nftnl_chain_alloc(), "chain"));
      applyAttrs(c.get(), ov.attrs, nftnl_chain_set_data, "chain", opIndex);
      nftnl_chain_nlmsg_build_payload(nlh, c.get());
      break;
    }
    case kObject: {
      ObjPtr o = makeObj(ov, opIndex);
      nftnl_obj_nlmsg_build_payload(nlh, o.get());
      break;
    }
    case kFlowtable: {
      FlowtablePtr f(checkAlloc(nftnl_flowtable_alloc(), "flowtable"));
      applyAttrs(f.get(), ov.attrs, nftnl_flowtable_set_data, "flowtable", opIndex);
      nftnl_flowtable_nlmsg_build_payload(nlh, f.get());
      break;
    }
    case kRule: {
      RulePtr r(checkAlloc(nftnl_rule_alloc(), "rule"));
      applyAttrs(r.get(), ov.attrs, nftnl_rule_set_data, "rule", opIndex);
      for (const auto &x : ov.exprs) nftnl_rule_add_expr(r.get(), makeExpr(x, opIndex).release());
      nftnl_rule_nlmsg_build_payload(nlh, r.get());
      break;
    }
    case kSet: {
      auto s = makeSet(ov, opIndex);
      for (const auto &x : ov.exprs) nftnl_set_add_expr(s.get(), makeExpr(x, opIndex).release());
      nftnl_set_nlmsg_build_payload(nlh, s.get());
      break;
    }
    default:
      throw std::logic_error("nftlink: internal error: buildObjectMsg on kind " + std::to_string(ov.kind));
  }
  if (nlh->nlmsg_len > reserved)
    throw std::logic_error("nftlink: internal error: " + opLabel(opIndex) + " overran its reservation");
  if (ov.bound > 60000) {
    const size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
    if (!nestsConsistent(reinterpret_cast<const uint8_t *>(nlh) + hdr, nlh->nlmsg_len - hdr, 0))
      throw WireError(ov.offset, opLabel(opIndex) + " does not fit netlink: an attribute nest (such as a rule's "
                                                     "expression list) would exceed 65535 bytes");
  }
  b.finish(int32_t(opIndex), -1, reserved);
}

// Reads the op's elements from the request one at a time and writes them straight into the batch.
void buildElementMsgs(Batch &b, RequestReader &rd, const OpView &ov, size_t opIndex, ElemView &ev) {
  auto set = makeSet(ov, opIndex);
  nlmsghdr *nlh = nullptr;
  nlattr *nest = nullptr;
  int32_t first = 0;
  const bool empty = ov.elemCount == 0;
  auto start = [&](int32_t firstElem) {
    char *p = b.reserve(kElemMsgReserve);
    nlh = nftnl_nlmsg_build_hdr(p, ov.msgType, ov.family, ov.nlFlags, b.nextSeq());
    // With no elements attached, this writes only NFTA_SET_ELEM_LIST_{SET,SET_ID,TABLE}.
    nftnl_set_elems_nlmsg_build_payload(nlh, set.get());
    nest = empty ? nullptr : mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
    first = firstElem;
  };
  auto end = [&]() {
    if (nest) mnl_attr_nest_end(nlh, nest);
    b.finish(int32_t(opIndex), empty ? -1 : first, kElemMsgReserve);
  };
  // An empty element list is still one message: for DELSETELEM the kernel reads it as "flush the set".
  start(0);
  // One libnftnl element at a time (allocated, built into the batch, freed): reusing one element
  // measured no faster, and a fresh one cannot carry state over from the element before.
  Scratch scratch;
  for (uint32_t i = 0; i < ov.elemCount; i++) {
    rd.nextElem(ov, i, ev);
    auto owned = makeElem(ev, opIndex, scratch);
    nftnl_set_elem *e = owned.get();
    const uint32_t before = nlh->nlmsg_len;
    nftnl_set_elem_nlmsg_build(nlh, e, NFTA_LIST_ELEM);
    const size_t nestLen = static_cast<char *>(mnl_nlmsg_get_payload_tail(nlh)) - reinterpret_cast<char *>(nest);
    if (nestLen > kNestLimit) {
      if (int32_t(i) == first)  // cannot happen: wire.cc caps one element at kElemBoundMax
        throw std::logic_error("nftlink: internal error: one element overflows a whole element-list nest");
      nlh->nlmsg_len = before;  // roll the element back and carry it into a fresh message
      end();
      start(int32_t(i));
      nftnl_set_elem_nlmsg_build(nlh, e, NFTA_LIST_ELEM);
    }
  }
  end();
}

// ---- replies -----------------------------------------------------------------------------------

// The attribute of our own copy of a message that contains `offs` (an offset from the start of the
// message, as NLMSGERR_ATTR_OFFS gives it), level by level: the type and sibling index of each
// attribute on the way, descending into nests (libmnl marks every nest it opens NLA_F_NESTED) until
// the attribute that starts at `offs`. Empty if `offs` is in no attribute.
std::vector<uint32_t> attrPathAt(const nlmsghdr *msg, uint32_t offs) {
  std::vector<uint32_t> path;
  const auto *base = reinterpret_cast<const uint8_t *>(msg);
  size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  size_t end = msg->nlmsg_len;
  for (uint32_t k = 0; off + NLA_HDRLEN <= end;) {
    const auto *a = reinterpret_cast<const nlattr *>(base + off);
    if (a->nla_len < NLA_HDRLEN || off + a->nla_len > end) break;
    if (offs >= off && offs < off + a->nla_len) {
      path.push_back(a->nla_type & NLA_TYPE_MASK);
      path.push_back(k);
      if (offs == off || !(a->nla_type & NLA_F_NESTED)) break;
      end = off + a->nla_len;  // one level down: the nest's attributes
      off += NLA_HDRLEN;
      k = 0;
      continue;
    }
    off += NLA_ALIGN(a->nla_len);
    k++;
  }
  return path;
}

// An NLMSG_ERROR: which operation (and element) the kernel refused, and why.
void handleError(const nlmsghdr *nlh, const Batch &b, std::vector<CommitError> &out) {
  if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr)) return;
  const auto *err = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh));
  if (err->error == 0) return;
  CommitError ce{-1, -1, err->error < 0 ? -err->error : err->error, "", true, {}};
  uint32_t offs = UINT32_MAX;
  if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
    // TLVs follow struct nlmsgerr, and the echoed request payload unless the kernel capped it.
    size_t tlv = NLMSG_HDRLEN + sizeof(nlmsgerr);
    if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && err->msg.nlmsg_len > sizeof(nlmsghdr))
      tlv += NLMSG_ALIGN(err->msg.nlmsg_len - sizeof(nlmsghdr));
    const auto *base = reinterpret_cast<const uint8_t *>(nlh);
    while (tlv + NLA_HDRLEN <= nlh->nlmsg_len) {
      const auto *a = reinterpret_cast<const nlattr *>(base + tlv);
      if (a->nla_len < NLA_HDRLEN || tlv + a->nla_len > nlh->nlmsg_len) break;
      const auto *payload = reinterpret_cast<const char *>(a) + NLA_HDRLEN;
      const size_t plen = a->nla_len - NLA_HDRLEN;
      if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) ce.message.assign(payload, strnlen(payload, plen));
      if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_OFFS && plen >= 4) std::memcpy(&offs, payload, 4);
      tlv += NLA_ALIGN(a->nla_len);
    }
  }
  if (const MsgRec *r = b.recOf(err->msg.nlmsg_seq)) {
    if (r->op >= 0) {
      ce.op = r->op;
      ce.batch = false;
      if (offs != UINT32_MAX) ce.attrPath = attrPathAt(b.at(r->off), offs);
      // An element message: the element nest the kernel pointed into (NFTA_SET_ELEM_LIST_ELEMENTS,
      // then the element's index among the list's nests).
      if (r->firstElem >= 0 && ce.attrPath.size() >= 4 && ce.attrPath[0] == NFTA_SET_ELEM_LIST_ELEMENTS)
        ce.element = r->firstElem + int32_t(ce.attrPath[3]);
    }
  } else if (ce.message.empty()) {
    ce.message = "nftlink: kernel error for unknown sequence number " + std::to_string(err->msg.nlmsg_seq);
  }
  out.push_back(std::move(ce));
}

// One message of the reply stream. Without NLM_F_ACK the kernel sends only errors (a refused batch)
// or, for a committed one, the echoes of the NEWRULEs that asked for them (see echo.h).
void handleReply(const nlmsghdr *nlh, const Batch &b, uint32_t portid, CommitResult &out) {
  if (nlh->nlmsg_pid != 0 && nlh->nlmsg_pid != portid) return;
  if (nlh->nlmsg_type == NLMSG_ERROR) return handleError(nlh, b, out.errors);
  // An echo carries the seq of the message that asked for it. Anything else on that seq (the DELRULE
  // a replace echoes for the rule it removed, a NEWGEN when it is the batch's first message) is not a
  // handle: echoedRuleHandle() looks at the type before libnftnl does.
  const MsgRec *r = b.recOf(nlh->nlmsg_seq);
  if (r == nullptr || !r->echo) return;
  uint64_t handle;
  if (echoedRuleHandle(nlh, &handle)) out.handles.push_back({r->op, handle});
}

// nfnetlink handles the whole batch inside sendmsg() (echoes included: nf_tables_commit() sends them
// before it returns), so every reply is already queued: drain without blocking.
CommitResult drainReplies(NlSocket &sock, const Batch &b) {
  CommitResult res;
  std::vector<uint8_t> rb(65536);  // an skb holds at most NLMSG_GOODSIZE (<= 8 KiB) of echoes
  bool lost = false;
  for (;;) {
    ssize_t n = recv(sock.fd(), rb.data(), rb.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == ENOBUFS) {  // the receive queue overflowed: some replies were dropped
        lost = true;
        continue;
      }
      throw std::runtime_error(std::string("nftlink: recv of the batch replies failed: ") + strerror(errno));
    }
    if (n == 0) break;
    int len = int(n);
    for (auto *nlh = reinterpret_cast<const nlmsghdr *>(rb.data()); mnl_nlmsg_ok(nlh, len);
         nlh = mnl_nlmsg_next(nlh, &len))
      handleReply(nlh, b, sock.portid(), res);
  }
  // Errors and echoes never come together; errors decide.
  if (!res.errors.empty()) res.handles.clear();
  if (lost && res.handles.empty()) {
    // Without NLM_F_ACK a dropped reply was an error (the batch was refused, we just cannot say
    // everything about why), or an echo; but the first skb always gets into the queue (drainStale()
    // emptied it), so a committed batch that asked for echoes leaves at least one.
    res.errors.push_back({-1, -1, ENOBUFS,
                          "nftlink: some kernel error replies were lost (receive buffer overrun); the batch was refused",
                          true, {}});
  }
  // lost with handles: the batch committed and some echoes were dropped; their operations have no
  // handle in the result (the caller sees which ones asked and got none).
  return res;
}

}  // namespace

BatchBuilder::BatchBuilder(size_t capacity) : b_(std::make_unique<Batch>(capacity)) {}
BatchBuilder::~BatchBuilder() = default;

void BatchBuilder::add(RequestReader &rd, uint32_t count) {
  OpView op;
  ElemView ev;
  for (uint32_t i = 0; i < count; i++, ops_++) {
    rd.nextOp(op);
    if (op.kind == kElements)
      buildElementMsgs(*b_, rd, op, ops_, ev);
    else
      buildObjectMsg(*b_, op, ops_);
  }
}

CommitResult BatchBuilder::send(NlSocket &sock, uint16_t flags, uint32_t genid) {
  Batch &b = *b_;
  b.begin((flags & kFlagGenid) != 0, genid);
  // CHECK: without BATCH_END nfnetlink validates every message, reports errors, then aborts (and so
  // echoes nothing).
  const bool check = (flags & kFlagCheck) != 0;
  if (!check) b.end();
  b.rebase(sock.takeSeq(uint32_t(b.recs().size())));

  // netlink_sendmsg() refuses a message larger than sk_sndbuf - 32 with EMSGSIZE.
  const size_t snd = sock.ensureSndBuf(b.wireLen() + 4096);
  // Every reply is queued while sendmsg() runs: errors, room for one per message (an skb's truesize is
  // about 1 KiB for a capped ack with extack TLVs), or the echoes of a committed batch.
  const size_t maxRcv = size_t(1) << 30;
  const size_t wantRcv = b.recs().size() * 2048 + echoReceiveRoom(check ? 0 : b.echoes()) + 65536;
  sock.ensureRcvBuf(wantRcv < maxRcv ? wantRcv : maxRcv);

  const ssize_t sent = mnl_socket_sendto(sock.mnl(), b.wire(), b.wireLen());
  if (sent < 0) {
    const int e = errno;
    if (e == EMSGSIZE || e == ENOBUFS)
      throw std::runtime_error("nftlink: the kernel refused a batch of " + std::to_string(b.wireLen()) +
                               " bytes: the socket send buffer is " + std::to_string(snd) +
                               " bytes (SO_SNDBUFFORCE needs CAP_NET_ADMIN; otherwise raise net.core.wmem_max): " +
                               strerror(e));
    throw std::runtime_error(std::string("nftlink: sendmsg of the batch failed: ") + strerror(e) + " (errno " +
                             std::to_string(e) + ")");
  }
  if (size_t(sent) != b.wireLen())
    throw std::runtime_error("nftlink: sendmsg sent " + std::to_string(sent) + " of " +
                             std::to_string(b.wireLen()) + " bytes");

  return drainReplies(sock, b);
}

CommitResult runCommit(NlSocket &sock, const uint8_t *request, size_t requestLen) {
  // Read and build in one pass: each operation (and each element) is validated from the request bytes
  // and turned into netlink at once. A malformed buffer throws before anything is sent.
  RequestReader rd(request, requestLen);
  // The netlink encoding of a typical request is within ~1.25x of its compact size (an element of a
  // concatenated map: 36 compact bytes, ~44 of netlink); headroom for message headers and one element
  // message's reservation. Only written pages become resident, so guessing high costs nothing.
  BatchBuilder bb(requestLen + requestLen / 2 + kElemMsgReserve + 65536);
  bb.add(rd, rd.count());
  rd.finish();
  return bb.send(sock, rd.flags(), rd.genid());
}

CommitRequest requestOf(const Napi::Uint8Array &arr) {
  CommitRequest req;
  req.len = arr.ByteLength();
  if (arr.ArrayBuffer().IsArrayBuffer()) {
    // Read in place by the worker (no copy of a multi-megabyte request): the reference keeps the
    // array alive; the contract asks the caller not to modify or transfer it meanwhile.
    req.data = arr.Data();
    req.ref = Napi::Persistent(arr.As<Napi::Object>());
  } else {
    // A SharedArrayBuffer can change under the worker at any time: copy it.
    req.copy.assign(arr.Data(), arr.Data() + req.len);
    req.data = req.copy.data();
  }
  return req;
}

Napi::Object commitResultToJs(Napi::Env env, const CommitResult &res) {
  Napi::Array arr = Napi::Array::New(env, res.errors.size());
  for (size_t i = 0; i < res.errors.size(); i++) {
    const CommitError &e = res.errors[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("op", Napi::Number::New(env, e.op));
    o.Set("element", Napi::Number::New(env, e.element));
    o.Set("errno", Napi::Number::New(env, e.err));
    o.Set("message", Napi::String::New(env, e.message));
    o.Set("phase", Napi::String::New(env, e.batch ? "batch" : "op"));
    Napi::Array path = Napi::Array::New(env, e.attrPath.size());
    for (size_t j = 0; j < e.attrPath.size(); j++) path.Set(uint32_t(j), Napi::Number::New(env, e.attrPath[j]));
    o.Set("attrPath", path);
    arr.Set(uint32_t(i), o);
  }
  // Handles are allocated from a per-table u64 counter starting at 1: far below 2^53, exact as doubles.
  Napi::Array handles = Napi::Array::New(env, res.handles.size());
  for (size_t i = 0; i < res.handles.size(); i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("op", Napi::Number::New(env, res.handles[i].op));
    o.Set("handle", Napi::Number::New(env, double(res.handles[i].handle)));
    handles.Set(uint32_t(i), o);
  }
  Napi::Object r = Napi::Object::New(env);
  r.Set("errors", arr);
  r.Set("handles", handles);
  return r;
}

namespace {

CommitResult timedCommit(Handle &h, NlSocket &sock, const CommitRequest &req);

class CommitWorker : public PromiseWorker {
 public:
  CommitWorker(Napi::Env env, std::shared_ptr<Handle> h, CommitRequest req)
      : PromiseWorker(env, std::move(h)), req_(std::move(req)) {}

 protected:
  void run(NlSocket &sock) override { res_ = timedCommit(handle(), sock, req_); }
  Napi::Value result(Napi::Env env) override { return commitResultToJs(env, res_); }

 private:
  // Destroyed with the worker, on the JS thread (after OnOK/OnError): the reference (and with it the
  // caller's buffer) outlives every read the worker thread makes.
  CommitRequest req_;
  CommitResult res_;
};

}  // namespace

// A batch this small is committed on the JS thread. The kernel applies a batch inside sendmsg, and
// for a few operations that takes tens of microseconds, less than handing the request to a pool
// thread and its result back (two thread wake-ups, most of a one-endpoint sync's time when the
// threads were idle). The JS thread then waits for the table's commit mutex too, which another
// writer can hold for as long as its own batch takes; a bound this low keeps our share of that
// wait short. Only when nothing of this handle is queued on the pool, so that order is kept.
constexpr size_t kInlineCommitBytes = 16 * 1024;
// ... and only while the handle's last small commit took the kernel less than this. A few
// operations can still cost the kernel milliseconds when they make it validate the whole table
// (NAT rules, jumps in verdict maps: Linux 6.18 nft_table_validate; about 20 ms at 10k services in
// kube-proxy's layout), time the JS thread would be held for; such tables commit on the pool.
// The measure is the committing thread's CPU time: the kernel applies the batch inside sendmsg, in
// that thread, so it is the kernel's work for the batch. Wall time would add whatever the scheduler
// gave other processes meanwhile, and on a loaded node would send a fast table's commits to the
// pool for as long as the load lasts.
constexpr uint32_t kInlineCommitMaxMicros = 2000;

namespace {

/** The calling thread's CPU time in microseconds (kernel and user). */
long long threadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/** runCommit, remembering how much CPU a small one took (kInlineCommitMaxMicros). */
CommitResult timedCommit(Handle &h, NlSocket &sock, const CommitRequest &req) {
  const long long started = threadCpuMicros();
  CommitResult res = runCommit(sock, req.data, req.len);
  if (req.len <= kInlineCommitBytes) {
    const long long us = threadCpuMicros() - started;
    h.smallCommitMicros.store(uint32_t(std::clamp<long long>(us, 0, UINT32_MAX)));
  }
  return res;
}

/** The commit on the JS thread, or nothing when it must be queued (see kInlineCommitBytes). */
std::optional<Napi::Promise> commitInline(Napi::Env env, Handle &h, const CommitRequest &request) {
  if (request.len > kInlineCommitBytes || h.queued.load() != 0 || h.smallCommitMicros.load() > kInlineCommitMaxMicros) return std::nullopt;
  std::unique_lock<std::mutex> lock(h.mu, std::try_to_lock);
  if (!lock.owns_lock() || h.closed.load() || !h.sock) return std::nullopt;
  Napi::Promise::Deferred done = Napi::Promise::Deferred::New(env);
  try {
    h.sock->drainStale();
    CommitResult res = timedCommit(h, *h.sock, request);
    lock.unlock();
    done.Resolve(commitResultToJs(env, res));
  } catch (...) {
    done.Reject(Napi::Error::New(env, currentErrorMessage()).Value());
  }
  return done.Promise();
}

}  // namespace

Napi::Promise startCommit(Napi::Env env, std::shared_ptr<Handle> h, CommitRequest request) {
  if (std::optional<Napi::Promise> done = commitInline(env, *h, request)) return *done;
  auto *w = new CommitWorker(env, std::move(h), std::move(request));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

}  // namespace nftlink
