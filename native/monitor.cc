#include "monitor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <climits>
#include <cstring>
#include <stdexcept>

#include "dump.h"
#include "nftnl-objects.h"
#include "object-writer.h"

namespace nftlink {

namespace {

// One datagram: the kernel coalesces a commit's notifications into skbs of about a page
// (nft_commit_notify, Linux 5.12+), but a single large rule travels alone in a bigger one.
constexpr size_t kDatagramMax = 256 * 1024;
// Per wake-up: at most this many datagrams or this many bytes of events go to JS in one call, so a
// burst does not hold the event loop and JS sees a batch while the kernel queues the next.
constexpr int kDatagramsPerWake = 64;
constexpr size_t kBatchBytes = 1024 * 1024;

std::string errnoText(int e) { return std::string(strerror(e)) + " (errno " + std::to_string(e) + ")"; }

void setRcvBuf(int fd, size_t bytes) {
  const int want = bytes > size_t(INT_MAX / 2) ? INT_MAX / 2 : static_cast<int>(bytes);
  // SO_RCVBUFFORCE ignores net.core.rmem_max but needs CAP_NET_ADMIN; SO_RCVBUF is capped by it.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
}

// NFT_MSG_NEWGEN's attributes. libnftnl 1.2.4 parses only NFTA_GEN_ID; the process id and name
// (Linux 4.16+) are read here.
struct GenInfo {
  uint32_t id = 0, pid = 0;
  bool hasId = false, hasPid = false;
  std::string name;
};

GenInfo parseGen(const nlmsghdr *nlh) {
  GenInfo g;
  mnl_attr_parse(
      nlh, sizeof(nfgenmsg),
      [](const nlattr *a, void *d) {
        auto *g = static_cast<GenInfo *>(d);
        const uint16_t type = mnl_attr_get_type(a);
        if ((type == NFTA_GEN_ID || type == NFTA_GEN_PROC_PID) && mnl_attr_validate(a, MNL_TYPE_U32) == 0) {
          const uint32_t v = ntohl(mnl_attr_get_u32(a));
          if (type == NFTA_GEN_ID) g->id = v, g->hasId = true;
          else g->pid = v, g->hasPid = true;
        } else if (type == NFTA_GEN_PROC_NAME && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0) {
          g->name = mnl_attr_get_str(a);
        }
        return MNL_CB_OK;
      },
      &g);
  return g;
}

}  // namespace

std::shared_ptr<Monitor> Monitor::open(Napi::Env env, const NetnsTarget &ns, size_t rcvbuf, Napi::Function onEvents,
                                       uint32_t skipPortid) {
  std::shared_ptr<Monitor> m(new Monitor(env));
  m->skipPortid_ = skipPortid;
  std::unique_ptr<NlSocket> sock = NlSocket::open(ns);
  const int fd = sock->fd();
  const int group = NFNLGRP_NFTABLES;
  if (mnl_socket_setsockopt(sock->mnl(), NETLINK_ADD_MEMBERSHIP, const_cast<int *>(&group), sizeof group) < 0)
    throw std::runtime_error("nftlink: cannot join the nf_tables multicast group in " + ns.describe() + ": " +
                             errnoText(errno));
  setRcvBuf(fd, rcvbuf);
  int cur = 0;
  socklen_t sl = sizeof cur;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &cur, &sl) == 0 && cur > 0) m->rcvbuf_ = size_t(cur);
  m->portid_ = sock->portid();
  m->buf_.resize(kDatagramMax);
  uv_loop_t *loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr)
    throw std::runtime_error("nftlink: no event loop to poll the monitor socket on");
  auto polled = std::make_unique<Polled>();
  if (const int e = uv_poll_init(loop, &polled->poll, fd); e != 0)
    throw std::runtime_error(std::string("nftlink: uv_poll_init failed: ") + uv_strerror(e));
  polled->sock = std::move(sock);
  polled->poll.data = m.get();
  m->polled_ = polled.release();
  m->onEvents_ = Napi::Persistent(onEvents);
  m->async_ = std::make_unique<Napi::AsyncContext>(env, "nftlink.monitor");
  // Environment teardown (worker thread exit, process exit) closes a monitor nobody closed.
  if (napi_add_env_cleanup_hook(env, cleanupHook, m.get()) == napi_ok) m->hooked_ = true;
  m->resume();
  return m;
}

Monitor::~Monitor() { close(); }

void Monitor::cleanupHook(void *arg) {
  auto *m = static_cast<Monitor *>(arg);
  m->hooked_ = false;  // the hook is being run: it must not be removed
  m->close();
}

void Monitor::pause() {
  if (closed_ || paused_) return;
  paused_ = true;
  uv_poll_stop(&polled_->poll);
}

void Monitor::resume() {
  if (closed_) return;
  paused_ = false;
  uv_poll_start(&polled_->poll, UV_READABLE, onPoll);
}

void Monitor::close() {
  if (closed_) return;
  closed_ = true;
  if (hooked_) napi_remove_env_cleanup_hook(env_, cleanupHook, this);
  hooked_ = false;
  if (polled_) {
    uv_poll_stop(&polled_->poll);
    // From here the handle's data is its Polled, not the monitor: uv_close lets no poll callback
    // through, and the socket closes with the handle, in the close callback (see Polled).
    polled_->poll.data = polled_;
    uv_close(reinterpret_cast<uv_handle_t *>(&polled_->poll),
             [](uv_handle_t *h) { delete static_cast<Polled *>(h->data); });
    polled_ = nullptr;
  }
  onEvents_.Reset();
  // Closed from inside onEvents (the consumer left): the callback's async context is still in use,
  // call() releases it when the callback returns.
  if (!calling_) async_.reset();
  buf_ = std::vector<uint8_t>();
}

void Monitor::onPoll(uv_poll_t *handle, int status, int) {
  auto *m = static_cast<Monitor *>(handle->data);
  if (m == nullptr || m->closed_) return;
  Napi::HandleScope scope(m->env_);
  if (status == UV_EBADF) {
    // libuv reports POLLERR as UV_EBADF and stops the handle. On a netlink socket POLLERR is the
    // pending socket error: ENOBUFS after an overrun, which recv() returns (readable() reports it)
    // before the queued events. Poll again unless reading fails for real.
    if (!m->paused_) uv_poll_start(&m->polled_->poll, UV_READABLE, onPoll);
  } else if (status < 0) {
    const std::string why = std::string("nftlink: polling the monitor socket failed: ") + uv_strerror(status);
    m->call(kMonitorError, Napi::Env(m->env_).Null(), why);
    m->close();
    return;
  }
  m->readable();
}

void Monitor::startBatch() {
  batch_ = Writer(64 * 1024);
  batch_.u32(kMagic);
  batch_.u16(kVersion);
  batch_.u16(0);
  batch_.u32(0);
  batch_.u32(0);
  count_ = 0;
}

void Monitor::flush() {
  if (count_ == 0) return;
  batch_.patchU32(12, count_);
  count_ = 0;
  Napi::Env env(env_);
  Napi::Value arr = toUint8Array(env, batch_);
  call(kMonitorEvents, arr, "");
}

void Monitor::readable() {
  startBatch();
  bool drained = false;
  std::string error;
  const int fd = polled_->sock->fd();
  for (int i = 0; i < kDatagramsPerWake && batch_.size() < kBatchBytes; i++) {
    const ssize_t n = recv(fd, buf_.data(), buf_.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        drained = true;
        break;
      }
      if (errno == ENOBUFS) {
        // The kernel dropped events: the receive queue was full. It says so once, when the socket
        // becomes congested, and then drops every event silently until the queue has been read
        // empty (netlink_overrun / netlink_rcv_wake, af_netlink.c). What is still queued came
        // before the gap, so the loss is reported once the queue is drained, after those events.
        overrun_ = true;
        continue;
      }
      error = "nftlink: reading the monitor socket failed: " + errnoText(errno);
      break;
    }
    if (size_t(n) > buf_.size()) {
      // Never expected (a notification is at most a few pages), but a cut datagram is lost events.
      overrun_ = true;
      continue;
    }
    try {
      parse(buf_.data(), size_t(n));
    } catch (const std::exception &e) {
      error = e.what();
      break;
    }
  }
  flush();
  if (closed_) return;  // the callback closed the monitor
  if (drained && overrun_) {
    overrun_ = false;
    call(kMonitorLost, Napi::Env(env_).Null(), "");
    if (closed_) return;
  }
  if (!error.empty()) {
    call(kMonitorError, Napi::Env(env_).Null(), error);
    close();
  }
}

void Monitor::parse(const uint8_t *buf, size_t len) {
  int left = int(len);
  for (const nlmsghdr *nlh = reinterpret_cast<const nlmsghdr *>(buf); mnl_nlmsg_ok(nlh, left);
       nlh = mnl_nlmsg_next(nlh, &left)) {
    if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES) continue;
    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(nfgenmsg))) continue;
    const uint8_t type = uint8_t(NFNL_MSG_TYPE(nlh->nlmsg_type));
    const uint8_t family = familyOf(nlh);
    const uint16_t flags = nlh->nlmsg_flags;
    // Every notification of a commit carries the committing socket's port id (nfnl_msg_put(portid,
    // seq) in nf_tables_api.c), so a skipped committer's changes are dropped before libnftnl. Except
    // its named sets' declarations: their types decode the elements others change in them later
    // (the TypeScript side drops them from the committer's transaction once they are known).
    const bool skipped = skipPortid_ != 0 && nlh->nlmsg_pid == skipPortid_;
    if (skipped && type != NFT_MSG_NEWGEN && type != NFT_MSG_NEWSET && type != NFT_MSG_DELSET) continue;
    switch (type) {
      case NFT_MSG_NEWTABLE:
      case NFT_MSG_DELTABLE: {
        TablePtr t(checkAlloc(nftnl_table_alloc(), "table"));
        if (nftnl_table_nlmsg_parse(nlh, t.get()) < 0) throw std::runtime_error("nftlink: libnftnl could not parse a table event");
        writeTableOp(batch_, t.get(), type, family, flags);
        break;
      }
      case NFT_MSG_NEWCHAIN:
      case NFT_MSG_DELCHAIN: {
        ChainPtr c(checkAlloc(nftnl_chain_alloc(), "chain"));
        if (nftnl_chain_nlmsg_parse(nlh, c.get()) < 0) throw std::runtime_error("nftlink: libnftnl could not parse a chain event");
        writeChainOp(batch_, c.get(), type, family, flags);
        break;
      }
      case NFT_MSG_NEWRULE:
      case NFT_MSG_DELRULE: {
        RulePtr r(checkAlloc(nftnl_rule_alloc(), "rule"));
        if (nftnl_rule_nlmsg_parse(nlh, r.get()) < 0) throw std::runtime_error("nftlink: libnftnl could not parse a rule event");
        writeRuleOp(batch_, r.get(), type, family, flags);
        break;
      }
      case NFT_MSG_NEWSET:
      case NFT_MSG_DELSET: {
        SetPtr s(checkAlloc(nftnl_set_alloc(), "set"));
        if (nftnl_set_nlmsg_parse(nlh, s.get()) < 0) throw std::runtime_error("nftlink: libnftnl could not parse a set event");
        // A skipped committer's anonymous sets go with its rules, which are skipped too.
        if (skipped && (nftnl_set_get_u32(s.get(), NFTNL_SET_FLAGS) & NFT_SET_ANONYMOUS) != 0) continue;
        writeSetOp(batch_, s.get(), type, family, flags);
        break;
      }
      case NFT_MSG_NEWSETELEM:
      case NFT_MSG_DELSETELEM: {
        SetPtr s(checkAlloc(nftnl_set_alloc(), "set"));
        if (nftnl_set_elems_nlmsg_parse(nlh, s.get()) < 0)
          throw std::runtime_error("nftlink: libnftnl could not parse a set element event");
        const char *table = nftnl_set_get_str(s.get(), NFTNL_SET_TABLE);
        const char *name = nftnl_set_get_str(s.get(), NFTNL_SET_NAME);
        const size_t countAt = writeElementsOpHead(batch_, type, family, table ? table : "", name ? name : "", flags);
        uint32_t n = 0;
        struct Ctx {
          Writer *w;
          uint32_t *n;
        } ctx{&batch_, &n};
        nftnl_set_elem_foreach(
            s.get(),
            [](nftnl_set_elem *e, void *d) {
              auto *c = static_cast<Ctx *>(d);
              writeElem(*c->w, e);
              (*c->n)++;
              return 0;
            },
            &ctx);
        batch_.patchU32(countAt, n);
        break;
      }
      case NFT_MSG_NEWGEN: {
        const GenInfo g = parseGen(nlh);
        writeOpHeader(batch_, type, kMonitorGeneration, family, flags);
        uint16_t attrs = 2;
        if (g.hasPid) attrs++;
        if (!g.name.empty()) attrs++;
        if (g.hasId) attrs++;
        batch_.u16(attrs);
        if (g.hasId) batch_.attr(kGenId, &g.id, 4);
        if (g.hasPid) batch_.attr(kGenPid, &g.pid, 4);
        if (!g.name.empty()) batch_.attr(kGenProcName, g.name.c_str(), uint32_t(g.name.size() + 1));
        // The committing socket's port id and the batch's sequence number: the kernel sends every
        // notification of a commit with them (nfnl_msg_put(portid, seq) in nf_tables_api.c).
        batch_.attr(kGenPortid, &nlh->nlmsg_pid, 4);
        batch_.attr(kGenSeq, &nlh->nlmsg_seq, 4);
        batch_.u16(0);
        break;
      }
      default:
        // Stateful objects, flowtables and traces are not modelled by the library.
        continue;
    }
    count_++;
  }
}

void Monitor::call(MonitorCall what, Napi::Value batch, const std::string &message) {
  if (closed_ || onEvents_.IsEmpty()) return;
  Napi::Env env(env_);
  calling_ = true;
  try {
    onEvents_.MakeCallback(env.Global(), {Napi::Number::New(env, what), batch, Napi::String::New(env, message)},
                           *async_);
  } catch (const Napi::Error &e) {
    // The callback threw: report it as Node reports any callback's exception, not as a crash here.
    napi_fatal_exception(env_, e.Value());
  }
  calling_ = false;
  if (closed_) async_.reset();
}

}  // namespace nftlink
