#include "echo.h"

#include <libnftnl/rule.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>

namespace nftlink {

namespace {

struct RuleDel { void operator()(nftnl_rule *p) const { nftnl_rule_free(p); } };

}  // namespace

bool echoedRuleHandle(const nlmsghdr *nlh, uint64_t *handle) {
  // Before libnftnl sees it: a NEWGEN or DELRULE can come on the same seq (echo.h).
  if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES || NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWRULE)
    return false;
  // A fresh rule per echo: libnftnl appends the parsed expressions, so a reused one would grow.
  std::unique_ptr<nftnl_rule, RuleDel> r(nftnl_rule_alloc());
  if (!r) throw std::runtime_error("nftlink: out of memory while parsing an echoed rule");
  if (nftnl_rule_nlmsg_parse(nlh, r.get()) < 0) return false;
  if (!nftnl_rule_is_set(r.get(), NFTNL_RULE_HANDLE)) return false;
  *handle = nftnl_rule_get_u64(r.get(), NFTNL_RULE_HANDLE);
  return true;
}

size_t echoReceiveRoom(size_t echoes) {
  // NLMSG_GOODSIZE is a page (at most 8 KiB) minus skb overhead, and nlmsg_new(NLMSG_GOODSIZE) a little
  // more: an skb's truesize (what the receive queue counts) stays under two pages plus the sk_buff.
  // On 6.18 (4 KiB pages) an echo skb is charged about half of this bound (docs/decisions.md).
  const long page = sysconf(_SC_PAGESIZE);
  const size_t good = page > 0 && page < 8192 ? size_t(page) : 8192;
  return echoes * (2 * good + 1024);
}

}  // namespace nftlink
