#include "object-writer.h"

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <string_view>

namespace nftlink {

uint8_t familyOf(const nlmsghdr *nlh) {
  return static_cast<const nfgenmsg *>(mnl_nlmsg_get_payload(nlh))->nfgen_family;
}

void writeOpHeader(Writer &w, uint8_t msgType, uint8_t kind, uint8_t family, uint16_t nlFlags) {
  w.u8(msgType);
  w.u8(kind);
  w.u16(nlFlags);
  w.u8(family);
  w.u8(0);
  w.u8(0);
  w.u8(0);
}

namespace {

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
  if (depth == 0 && spec && spec->children) nftnl_expr_expr_foreach(e, collectExpr, &children);
  writeExprs(w, children, depth + 1);
}

}  // namespace

void writeExprs(Writer &w, const std::vector<nftnl_expr *> &exprs, int depth) {
  w.u16(uint16_t(exprs.size() > 0xFFFF ? 0xFFFF : exprs.size()));
  for (size_t i = 0; i < exprs.size() && i < 0xFFFF; i++) writeExpr(w, exprs[i], depth);
}

int collectExpr(nftnl_expr *e, void *d) {
  static_cast<std::vector<nftnl_expr *> *>(d)->push_back(e);
  return 0;
}

void writeTableOp(Writer &w, nftnl_table *t, uint8_t msgType, uint8_t family, uint16_t nlFlags) {
  writeOpHeader(w, msgType, kTable, family, nlFlags);
  writeAttrs(w, objectSpec(kTable), [&](uint16_t id, uint32_t *len) {
    return nftnl_table_is_set(t, id) ? nftnl_table_get_data(t, id, len) : nullptr;
  });
  w.u16(0);
}

void writeChainOp(Writer &w, nftnl_chain *c, uint8_t msgType, uint8_t family, uint16_t nlFlags) {
  writeOpHeader(w, msgType, kChain, family, nlFlags);
  writeAttrs(w, objectSpec(kChain), [&](uint16_t id, uint32_t *len) {
    return nftnl_chain_is_set(c, id) ? nftnl_chain_get_data(c, id, len) : nullptr;
  });
  w.u16(0);
}

void writeSetOp(Writer &w, nftnl_set *s, uint8_t msgType, uint8_t family, uint16_t nlFlags) {
  writeOpHeader(w, msgType, kSet, family, nlFlags);
  writeAttrs(w, objectSpec(kSet), [&](uint16_t id, uint32_t *len) {
    return nftnl_set_is_set(s, id) ? nftnl_set_get_data(s, id, len) : nullptr;
  });
  std::vector<nftnl_expr *> exprs;
  nftnl_set_expr_foreach(s, collectExpr, &exprs);
  writeExprs(w, exprs, 0);
}

void writeRuleOp(Writer &w, nftnl_rule *r, uint8_t msgType, uint8_t family, uint16_t nlFlags, bool withoutExprs) {
  writeOpHeader(w, msgType, kRule, family, nlFlags);
  writeAttrs(w, objectSpec(kRule), [&](uint16_t id, uint32_t *len) {
    return nftnl_rule_is_set(r, id) ? nftnl_rule_get_data(r, id, len) : nullptr;
  });
  std::vector<nftnl_expr *> exprs;
  if (!withoutExprs) nftnl_expr_foreach(r, collectExpr, &exprs);
  writeExprs(w, exprs, 0);
}

void writeObjOp(Writer &w, nftnl_obj *o, uint8_t msgType, uint8_t family, uint16_t nlFlags) {
  writeOpHeader(w, msgType, kObject, family, nlFlags);
  // The common attributes as writeAttrs writes them, then the typed ones after them in one count.
  const size_t countAt = w.size();
  w.u16(0);
  uint16_t n = 0;
  auto put = [&](uint16_t id, AttrKind k) {
    if (!nftnl_obj_is_set(o, id)) return;
    uint32_t len = 0;
    const void *p = nftnl_obj_get_data(o, id, &len);
    if (p == nullptr) return;
    // Strings by their own length: ct helper names come back with strlen() as their length.
    if (k == AttrKind::Str) len = uint32_t(strlen(static_cast<const char *>(p)) + 1);
    w.attr(id, p, len);
    n++;
  };
  const ObjectSpec &common = objectSpec(kObject);
  for (uint16_t id = 0; id < kObjBase && id < common.count; id++)
    if (common.attrs[id].kind != AttrKind::None) put(id, common.attrs[id].kind);
  const ObjectSpec *typed = nftnl_obj_is_set(o, NFTNL_OBJ_TYPE) ? objTypeSpec(nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE)) : nullptr;
  if (typed != nullptr)
    for (uint16_t i = 0; i < typed->count; i++) put(uint16_t(kObjBase + i), typed->attrs[i].kind);
  w.patchU16(countAt, n);
  w.u16(0);
}

void writeFlowtableOp(Writer &w, nftnl_flowtable *f, uint8_t msgType, uint8_t family, uint16_t nlFlags) {
  writeOpHeader(w, msgType, kFlowtable, family, nlFlags);
  writeAttrs(w, objectSpec(kFlowtable), [&](uint16_t id, uint32_t *len) {
    return nftnl_flowtable_is_set(f, id) ? nftnl_flowtable_get_data(f, id, len) : nullptr;
  });
  w.u16(0);
}

size_t writeElementsOpHead(Writer &w, uint8_t msgType, uint8_t family, const char *table, const char *set,
                           uint16_t nlFlags) {
  writeOpHeader(w, msgType, kElements, family, nlFlags);
  w.u16(2);
  w.attr(0 /*NFTNL_SET_TABLE*/, table, uint32_t(strlen(table) + 1));
  w.attr(1 /*NFTNL_SET_NAME*/, set, uint32_t(strlen(set) + 1));
  w.u16(0);
  const size_t countAt = w.size();
  w.u32(0);
  return countAt;
}

void writeElementHashesOp(Writer &w, uint8_t family, const char *table, const char *set, const std::vector<double> *hashes) {
  writeOpHeader(w, kNewSetElem, kElementHashes, family);
  w.u16(hashes ? 3 : 2);
  w.attr(0 /*NFTNL_SET_TABLE*/, table, uint32_t(strlen(table) + 1));
  w.attr(1 /*NFTNL_SET_NAME*/, set, uint32_t(strlen(set) + 1));
  if (hashes) w.attr(kElementHashesAttr, hashes->data(), uint32_t(hashes->size() * sizeof(double)));
  w.u16(0);
}

void writeElem(Writer &w, nftnl_set_elem *e) {
  writeAttrs(w, elemSpec(), [&](uint16_t id, uint32_t *len) -> const void * {
    return nftnl_set_elem_is_set(e, id) ? nftnl_set_elem_get(e, id, len) : nullptr;
  });
  std::vector<nftnl_expr *> exprs;
  nftnl_set_elem_expr_foreach(e, collectExpr, &exprs);
  writeExprs(w, exprs, 1);
}

}  // namespace nftlink
