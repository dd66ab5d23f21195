// Rule handles learned from the kernel's echo of a committed NEWRULE (NLM_F_ECHO), the way
// `nft --echo` learns them.
//
// Kernel behaviour this relies on (net/netfilter/nf_tables_api.c, checked on 6.18):
// - a message with NLM_F_ECHO sets ctx->report; on commit, nf_tables_rule_notify() builds an
//   NFT_MSG_NEWRULE notification (NFTA_RULE_HANDLE, the expressions, nlmsg_pid = our portid,
//   nlmsg_seq = the request's seq) and queues it; nft_commit_notify() then packs consecutive
//   notifications into skbs of at most NLMSG_GOODSIZE and unicasts each to the sender (nlmsg_notify
//   with report set), all inside the sendmsg() of the batch.
// - nothing is echoed for a refused or aborted batch (errors and echoes never come together, and a
//   check-mode batch, which has no BATCH_END, echoes nothing).
// - the unicast does not wait: when the receive queue is full the skb is dropped and the socket gets
//   ENOBUFS, like a dropped error.
// - consecutive echoes share one skb (one datagram) while their total stays under NLMSG_GOODSIZE
//   (~3.7 KiB with 4 KiB pages: 8 small rules). Measured: 5000 echoes of ~2.3 KiB (one per skb) were
//   charged ~4.4 KiB each against the receive buffer; a single echo of 7840 bytes still arrived.
// - an echo larger than that (a rule of 60 `log` expressions with 120-byte prefixes) is not sent, and
//   nothing tells the sender (nfnetlink_set_err() skips our portid): the rule is committed, its
//   operation just gets no handle.
// - a replace (NLM_F_REPLACE) echoes a DELRULE for the old rule and then a NEWRULE for the new one,
//   both on the request's seq; the new rule keeps the old one's handle.
// - when the batch's first message (the one after BEGIN) has NLM_F_ECHO, the kernel also unicasts an
//   NFT_MSG_NEWGEN on that message's seq, after the rule echoes (observed; nf_tables_gen_notify()
//   takes the report flag from nlmsg_hdr() of the batch skb).
// So a message on an echoed rule's seq is not necessarily a rule, and libnftnl abort()s the process
// ("nf_tables kernel ABI is broken") when it parses a NEWGEN as a rule: the type is checked first.
#pragma once

#include <cstddef>
#include <cstdint>

struct nlmsghdr;

namespace nftlink {

struct RuleHandle {
  int32_t op;       // index of the operation in the request
  uint64_t handle;  // NFTA_RULE_HANDLE
};

// True (and *handle set) when `nlh` is an NFT_MSG_NEWRULE message that libnftnl parses and that
// carries NFTNL_RULE_HANDLE. Throws std::runtime_error only when libnftnl cannot allocate.
bool echoedRuleHandle(const nlmsghdr *nlh, uint64_t *handle);

// Receive-queue room to reserve for `echoes` echoed rules: as if each came alone in its own skb (the
// kernel packs several per skb when they fit; this is the worst case, and a receive-buffer limit only
// costs memory when it is used).
size_t echoReceiveRoom(size_t echoes);

}  // namespace nftlink
