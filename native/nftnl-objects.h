// Ownership of libnftnl objects: one unique_ptr type per object kind, and the allocation check,
// shared by commit.cc (objects built to send), dump.cc (objects parsed from replies) and
// generation.cc.
#pragma once

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/gen.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace nftlink {

struct TableDel { void operator()(nftnl_table *p) const { nftnl_table_free(p); } };
struct ChainDel { void operator()(nftnl_chain *p) const { nftnl_chain_free(p); } };
struct RuleDel { void operator()(nftnl_rule *p) const { nftnl_rule_free(p); } };
struct SetDel { void operator()(nftnl_set *p) const { nftnl_set_free(p); } };
struct ElemDel { void operator()(nftnl_set_elem *p) const { nftnl_set_elem_free(p); } };
struct ExprDel { void operator()(nftnl_expr *p) const { nftnl_expr_free(p); } };
struct ObjDel { void operator()(nftnl_obj *p) const { nftnl_obj_free(p); } };
struct FlowtableDel { void operator()(nftnl_flowtable *p) const { nftnl_flowtable_free(p); } };
struct GenDel { void operator()(nftnl_gen *p) const { nftnl_gen_free(p); } };

using TablePtr = std::unique_ptr<nftnl_table, TableDel>;
using ChainPtr = std::unique_ptr<nftnl_chain, ChainDel>;
using RulePtr = std::unique_ptr<nftnl_rule, RuleDel>;
using SetPtr = std::unique_ptr<nftnl_set, SetDel>;
using ElemPtr = std::unique_ptr<nftnl_set_elem, ElemDel>;
using ExprPtr = std::unique_ptr<nftnl_expr, ExprDel>;
using ObjPtr = std::unique_ptr<nftnl_obj, ObjDel>;
using FlowtablePtr = std::unique_ptr<nftnl_flowtable, FlowtableDel>;
using GenPtr = std::unique_ptr<nftnl_gen, GenDel>;

// `p` (a libnftnl *_alloc() result), or a std::runtime_error naming `what` if it is null.
template <typename T>
T *checkAlloc(T *p, const char *what) {
  if (p == nullptr) throw std::runtime_error(std::string("nftlink: out of memory allocating a libnftnl ") + what);
  return p;
}

}  // namespace nftlink
