// libnftnl objects written in the compact format (native/README.md): what a dump writes for each
// object it parsed, and what the monitor writes for each event (the same bytes, so TypeScript reads
// both with one decoder).
#pragma once

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "wire.h"

struct nlmsghdr;

namespace nftlink {

// The nfgenmsg family of a kernel message.
uint8_t familyOf(const nlmsghdr *nlh);

// An op's 8-byte header: msgType, kind, nlFlags, family, 3 bytes of padding.
void writeOpHeader(Writer &w, uint8_t msgType, uint8_t kind, uint8_t family, uint16_t nlFlags = 0);

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

// u16 count + the expressions; `depth` 0 for a rule's or set's list (a dynset there may carry its
// own), 1 for nested lists.
void writeExprs(Writer &w, const std::vector<nftnl_expr *> &exprs, int depth);
// An nftnl_*_expr_foreach callback collecting into a std::vector<nftnl_expr *>.
int collectExpr(nftnl_expr *e, void *d);

// One whole op (header, attributes, expressions) for a parsed object.
void writeTableOp(Writer &w, nftnl_table *t, uint8_t msgType, uint8_t family, uint16_t nlFlags = 0);
void writeChainOp(Writer &w, nftnl_chain *c, uint8_t msgType, uint8_t family, uint16_t nlFlags = 0);
void writeSetOp(Writer &w, nftnl_set *s, uint8_t msgType, uint8_t family, uint16_t nlFlags = 0);
// withoutExprs: the rule's attributes only, an empty expression list (a dump's kDumpOmitDigestedRuleExprs).
void writeRuleOp(Writer &w, nftnl_rule *r, uint8_t msgType, uint8_t family, uint16_t nlFlags = 0, bool withoutExprs = false);
// A named object: its common attributes, then those of its type (ids 16 and up, objTypeSpec).
void writeObjOp(Writer &w, nftnl_obj *o, uint8_t msgType, uint8_t family, uint16_t nlFlags = 0);
void writeFlowtableOp(Writer &w, nftnl_flowtable *f, uint8_t msgType, uint8_t family, uint16_t nlFlags = 0);
// A kind-4 op up to its element count, naming its set by table and name; returns where the u32
// element count sits (written 0: patch it once the elements are written).
size_t writeElementsOpHead(Writer &w, uint8_t msgType, uint8_t family, const char *table, const char *set,
                           uint16_t nlFlags = 0);
// One element of a kind-4 op: its attributes and its expressions.
void writeElem(Writer &w, nftnl_set_elem *e);
// A dump's kind-8 op (kDumpElementHashes): the set by table and name, and attribute 2 with the
// hashes as little-endian doubles when `hashes` is given (none: an element was declined).
void writeElementHashesOp(Writer &w, uint8_t family, const char *table, const char *set, const std::vector<double> *hashes);

}  // namespace nftlink
