#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/gen.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <stdexcept>

#include "generation.h"
#include "netlink-request.h"
#include "nftnl-objects.h"
#include "worker.h"

namespace nftlink {

uint32_t runGetGeneration(NlSocket &sock) {
  char buf[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr *req = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETGEN, AF_UNSPEC, 0, sock.takeSeq(1));
  bool got = false;
  uint32_t id = 0;
  RequestResult r = netlinkRequest(sock, "generation", req, false, [&](const nlmsghdr *nlh) {
    if (nlh->nlmsg_type != ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN)) return;
    GenPtr g(checkAlloc(nftnl_gen_alloc(), "generation"));
    if (nftnl_gen_nlmsg_parse(nlh, g.get()) < 0 || !nftnl_gen_is_set(g.get(), NFTNL_GEN_ID))
      throw std::runtime_error("nftlink: libnftnl could not parse the kernel's NEWGEN reply");
    id = nftnl_gen_get_u32(g.get(), NFTNL_GEN_ID);
    got = true;
  });
  if (r.error)
    throw std::runtime_error(std::string("nftlink: the kernel refused GETGEN: ") + strerror(r.error) + " (errno " +
                             std::to_string(r.error) + ")");
  if (!got) throw std::runtime_error("nftlink: the kernel answered GETGEN without a NEWGEN message");
  return id;
}

namespace {

class GenerationWorker : public PromiseWorker {
 public:
  using PromiseWorker::PromiseWorker;

 protected:
  void run(NlSocket &sock) override { gen_ = runGetGeneration(sock); }
  Napi::Value result(Napi::Env env) override { return Napi::Number::New(env, gen_); }

 private:
  uint32_t gen_ = 0;
};

}  // namespace

Napi::Promise startGetGeneration(Napi::Env env, std::shared_ptr<Handle> h) {
  auto *w = new GenerationWorker(env, std::move(h));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

}  // namespace nftlink
