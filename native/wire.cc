// Compact-format reader/writer and libnftnl 1.2.4 attribute tables (see wire.h for why).
//
// The sizes below mirror libnftnl 1.2.4: the nftnl_*_validate[] arrays of src/table.c, chain.c,
// rule.c, set.c and set_elem.c, plus the fields those setters memcpy without a validate entry
// (TABLE_USE, TABLE_OWNER, CHAIN_USE, RULE ids, SET_ID ...), and for expressions the struct field each
// src/expr/*.c setter copies into (enum registers are 4 bytes; log group/qthreshold and queue
// num/total/flags are u16; ct/xfrm dir, exthdr type, osf ttl, reject code and synproxy wscale are u8).
#include "wire.h"

#include <libnftnl/object.h>

#include <cstdio>
#include <cstring>
#include <new>

namespace nftlink {

using K = AttrKind;

// ---- object tables (ids are libnftnl's public enums) -------------------------------------------

static const AttrSpec kTableAttrs[] = {
    {"name", K::Str},      {"family", K::U32},  {"flags", K::U32},     {"use", K::U32},
    {"handle", K::U64},    {"userdata", K::UserData}, {"owner", K::U32},
};
static const AttrSpec kChainAttrs[] = {
    {"name", K::Str},     {"family", K::U32},  {"table", K::Str},   {"hooknum", K::U32},
    {"prio", K::U32},     {"policy", K::U32},  {"use", K::U32},     {"bytes", K::U64},
    {"packets", K::U64},  {"handle", K::U64},  {"type", K::Str},    {"dev", K::Str},
    {"devices", K::Devices}, {"flags", K::U32}, {"id", K::U32},     {"userdata", K::UserData},
};
static const AttrSpec kRuleAttrs[] = {
    {"family", K::U32},       {"table", K::Str},       {"chain", K::Str},
    {"handle", K::U64},       {"compat_proto", K::U32}, {"compat_flags", K::U32},
    {"position", K::U64},     {"userdata", K::UserData}, {"id", K::U32},
    {"position_id", K::U32},
};
static const AttrSpec kSetAttrs[] = {
    {"table", K::Str},       {"name", K::Str},        {"flags", K::U32},      {"key_type", K::U32},
    {"key_len", K::U32},     {"data_type", K::U32},   {"data_len", K::U32},   {"family", K::U32},
    {"id", K::U32},          {"policy", K::U32},      {"desc_size", K::U32},  {"timeout", K::U64},
    {"gc_interval", K::U32}, {"userdata", K::UserData}, {"obj_type", K::U32}, {"handle", K::U64},
    {"desc_concat", K::Concat}, {"expr", K::Pointer}, {"expressions", K::Pointer},
};
static const AttrSpec kElemAttrs[] = {
    {"flags", K::U32},     {"key", K::Data},        {"verdict", K::U32},   {"chain", K::Str},
    {"data", K::Data},     {"timeout", K::U64},     {"expiration", K::U64}, {"userdata", K::UserData},
    {"expr", K::Pointer},  {"objref", K::Str},      {"key_end", K::Data},  {"expressions", K::Pointer},
};

// Named stateful objects: the common attributes, then NFTNL_OBJ_BASE (16) on, whose meaning
// depends on the type (checked against kObjTypes once the type is known, see checkObjectTyped).
static const AttrSpec kObjAttrs[] = {
    {"table", K::Str},  {"name", K::Str},    {"type", K::U32},          {"family", K::U32},
    {"use", K::U32},    {"handle", K::U64},  {"userdata", K::UserData}, {"unused", K::None},
    {"unused", K::None},      {"unused", K::None},       {"unused", K::None},             {"unused", K::None},
    {"unused", K::None},      {"unused", K::None},       {"unused", K::None},             {"unused", K::None},
    {"typed", K::ObjTyped}, {"typed", K::ObjTyped}, {"typed", K::ObjTyped}, {"typed", K::ObjTyped},
    {"typed", K::ObjTyped},
};
static const AttrSpec kFlowtableAttrs[] = {
    {"name", K::Str},  {"family", K::U32},       {"table", K::Str}, {"hooknum", K::U32}, {"prio", K::U32},
    {"use", K::U32},   {"devices", K::Devices},  {"size", K::U32},  {"flags", K::U32},   {"handle", K::U64},
};

#define NFTLINK_COUNT(a) static_cast<uint16_t>(sizeof(a) / sizeof((a)[0]))

// libnftnl 1.2.4's src/obj/*.c field sizes (the setters memcpy sizeof(field) whatever the length).
static const AttrSpec o_counter[] = {{"packets", K::U64}, {"bytes", K::U64}};
static const AttrSpec o_quota[] = {{"bytes", K::U64}, {"consumed", K::U64}, {"flags", K::U32}};
// The name goes into a 16-byte array (NFT_CT_HELPER_NAME_LEN): longer is refused in checkObjectTyped.
static const AttrSpec o_ct_helper[] = {{"name", K::Str}, {"l3proto", K::U16}, {"l4proto", K::U8}};
static const AttrSpec o_limit[] = {{"rate", K::U64}, {"unit", K::U64}, {"burst", K::U32}, {"type", K::U32},
                                   {"flags", K::U32}};
// The timeout array is NFTNL_CTTIMEOUT_ARRAY_MAX u32s, copied whole: exactly that size (Data would
// accept less and libnftnl would read past it).
static const AttrSpec o_ct_timeout[] = {{"l3proto", K::U16}, {"l4proto", K::U8}, {"array", K::ObjTyped}};
static const AttrSpec o_secmark[] = {{"ctx", K::Str}};
static const AttrSpec o_ct_expect[] = {{"l3proto", K::U16}, {"l4proto", K::U8}, {"dport", K::U16},
                                       {"timeout", K::U32}, {"size", K::U8}};
static const AttrSpec o_synproxy[] = {{"mss", K::U16}, {"wscale", K::U8}, {"flags", K::U32}};

// Indexed by NFT_OBJECT_*: 5 connlimit has no libnftnl object, 6 tunnel is not sent.
static const ObjectSpec kObjTypes[] = {
    {"", nullptr, 0},
    {"counter", o_counter, NFTLINK_COUNT(o_counter)},
    {"quota", o_quota, NFTLINK_COUNT(o_quota)},
    {"ct helper", o_ct_helper, NFTLINK_COUNT(o_ct_helper)},
    {"limit", o_limit, NFTLINK_COUNT(o_limit)},
    {"", nullptr, 0},
    {"", nullptr, 0},
    {"ct timeout", o_ct_timeout, NFTLINK_COUNT(o_ct_timeout)},
    {"secmark", o_secmark, NFTLINK_COUNT(o_secmark)},
    {"ct expectation", o_ct_expect, NFTLINK_COUNT(o_ct_expect)},
    {"synproxy", o_synproxy, NFTLINK_COUNT(o_synproxy)},
};

const ObjectSpec *objTypeSpec(uint32_t type) {
  if (type >= NFTLINK_COUNT(kObjTypes) || kObjTypes[type].attrs == nullptr) return nullptr;
  return &kObjTypes[type];
}

static const ObjectSpec kObjects[] = {
    {"table", kTableAttrs, NFTLINK_COUNT(kTableAttrs)},
    {"chain", kChainAttrs, NFTLINK_COUNT(kChainAttrs)},
    {"rule", kRuleAttrs, NFTLINK_COUNT(kRuleAttrs)},
    {"set", kSetAttrs, NFTLINK_COUNT(kSetAttrs)},
    // kind 4 names its set with NFTNL_SET_* attributes; only TABLE, NAME and ID mean anything there.
    {"elements", kSetAttrs, NFTLINK_COUNT(kSetAttrs)},
    // Kind 5 is only ever a monitor reply (NEWGEN); a request with it is refused before this is read.
    {"generation", kTableAttrs, 0},
    {"object", kObjAttrs, NFTLINK_COUNT(kObjAttrs)},
    {"flowtable", kFlowtableAttrs, NFTLINK_COUNT(kFlowtableAttrs)},
};
static const ObjectSpec kElemObject = {"element", kElemAttrs, NFTLINK_COUNT(kElemAttrs)};

const ObjectSpec &objectSpec(Kind k) { return kObjects[k]; }
const ObjectSpec &elemSpec() { return kElemObject; }

// ---- expression tables -------------------------------------------------------------------------

#define X(n, k) {n, K::k}
static const AttrSpec kNameAttr = {"name", K::None};
static const AttrSpec e_payload[] = {kNameAttr, X("dreg", U32), X("base", U32), X("offset", U32), X("len", U32),
                                     X("sreg", U32), X("csum_type", U32), X("csum_offset", U32), X("flags", U32)};
// numgen/hash SET_NAME/SET_ID are deprecated: their setters return -1 in 1.2.4.
static const AttrSpec e_numgen[] = {kNameAttr, X("dreg", U32), X("modulus", U32), X("type", U32), X("offset", U32)};
static const AttrSpec e_meta[] = {kNameAttr, X("key", U32), X("dreg", U32), X("sreg", U32)};
static const AttrSpec e_rt[] = {kNameAttr, X("key", U32), X("dreg", U32)};
static const AttrSpec e_socket[] = {kNameAttr, X("key", U32), X("dreg", U32), X("level", U32)};
static const AttrSpec e_tunnel[] = {kNameAttr, X("key", U32), X("dreg", U32)};
static const AttrSpec e_cmp[] = {kNameAttr, X("sreg", U32), X("op", U32), X("data", Data)};
static const AttrSpec e_range[] = {kNameAttr, X("sreg", U32), X("op", U32), X("from_data", Data), X("to_data", Data)};
static const AttrSpec e_immediate[] = {kNameAttr, X("dreg", U32), X("data", Data), X("verdict", U32), X("chain", Str),
                                       X("chain_id", U32)};
static const AttrSpec e_counter[] = {kNameAttr, X("packets", U64), X("bytes", U64)};
static const AttrSpec e_connlimit[] = {kNameAttr, X("count", U32), X("flags", U32)};
static const AttrSpec e_bitwise[] = {kNameAttr, X("sreg", U32), X("dreg", U32), X("len", U32), X("mask", Data),
                                     X("xor", Data), X("op", U32), X("data", Data)};
// xtables compat (iptables-nft's rules, sent back as they were dumped): the info is the extension's
// kernel struct, opaque here; libnftnl keeps a pointer to it and frees it with the expression.
static const AttrSpec e_target[] = {kNameAttr, X("name", Str), X("rev", U32), X("info", XtInfo)};
static const AttrSpec e_match[] = {kNameAttr, X("name", Str), X("rev", U32), X("info", XtInfo)};
static const AttrSpec e_nat[] = {kNameAttr, X("type", U32), X("family", U32), X("reg_addr_min", U32),
                                 X("reg_addr_max", U32), X("reg_proto_min", U32), X("reg_proto_max", U32),
                                 X("flags", U32)};
static const AttrSpec e_tproxy[] = {kNameAttr, X("family", U32), X("reg_addr", U32), X("reg_port", U32)};
static const AttrSpec e_lookup[] = {kNameAttr, X("sreg", U32), X("dreg", U32), X("set", Str), X("set_id", U32),
                                    X("flags", U32)};
static const AttrSpec e_dynset[] = {kNameAttr, X("sreg_key", U32), X("sreg_data", U32), X("op", U32),
                                    X("timeout", U64), X("set_name", Str), X("set_id", U32), X("expr", Pointer),
                                    X("expressions", Pointer), X("flags", U32)};
static const AttrSpec e_log[] = {kNameAttr, X("prefix", Str), X("group", U16), X("snaplen", U32),
                                 X("qthreshold", U16), X("level", U32), X("flags", U32)};
static const AttrSpec e_exthdr[] = {kNameAttr, X("dreg", U32), X("type", U8), X("offset", U32), X("len", U32),
                                    X("flags", U32), X("op", U32), X("sreg", U32)};
static const AttrSpec e_ct[] = {kNameAttr, X("dreg", U32), X("key", U32), X("dir", U8), X("sreg", U32)};
static const AttrSpec e_byteorder[] = {kNameAttr, X("dreg", U32), X("sreg", U32), X("op", U32), X("len", U32),
                                       X("size", U32)};
static const AttrSpec e_limit[] = {kNameAttr, X("rate", U64), X("unit", U64), X("burst", U32), X("type", U32),
                                   X("flags", U32)};
static const AttrSpec e_reject[] = {kNameAttr, X("type", U32), X("code", U8)};
static const AttrSpec e_queue[] = {kNameAttr, X("num", U16), X("total", U16), X("flags", U16), X("sreg_qnum", U32)};
static const AttrSpec e_quota[] = {kNameAttr, X("bytes", U64), X("flags", U32), X("consumed", U64)};
static const AttrSpec e_masq[] = {kNameAttr, X("flags", U32), X("reg_proto_min", U32), X("reg_proto_max", U32)};
static const AttrSpec e_redir[] = {kNameAttr, X("reg_proto_min", U32), X("reg_proto_max", U32), X("flags", U32)};
static const AttrSpec e_dup[] = {kNameAttr, X("sreg_addr", U32), X("sreg_dev", U32)};
static const AttrSpec e_flow[] = {kNameAttr, X("table_name", Str)};
static const AttrSpec e_fwd[] = {kNameAttr, X("sreg_dev", U32), X("sreg_addr", U32), X("nfproto", U32)};
static const AttrSpec e_hash[] = {kNameAttr, X("sreg", U32), X("dreg", U32), X("len", U32), X("modulus", U32),
                                  X("seed", U32), X("offset", U32), X("type", U32)};
static const AttrSpec e_fib[] = {kNameAttr, X("dreg", U32), X("result", U32), X("flags", U32)};
static const AttrSpec e_objref[] = {kNameAttr, X("imm_type", U32), X("imm_name", Str), X("set_sreg", U32),
                                    X("set_name", Str), X("set_id", U32)};
static const AttrSpec e_osf[] = {kNameAttr, X("dreg", U32), X("ttl", U8), X("flags", U32)};
// xfrm SREG (id 2) has no field in 1.2.4's struct and its setter returns -1.
static const AttrSpec e_xfrm[] = {kNameAttr, X("dreg", U32), X("sreg", None), X("key", U32), X("dir", U8),
                                  X("spnum", U32)};
static const AttrSpec e_synproxy[] = {kNameAttr, X("mss", U16), X("wscale", U8), X("flags", U32)};
static const AttrSpec e_last[] = {kNameAttr, X("msecs", U64), X("set", U32)};
static const AttrSpec e_notrack[] = {kNameAttr};
#undef X

#define E(name, arr, commit, children) {name, arr, NFTLINK_COUNT(arr), commit, children}
static const ExprSpec kExprs[] = {
    E("payload", e_payload, true, false),   E("numgen", e_numgen, true, false),
    E("meta", e_meta, true, false),         E("rt", e_rt, true, false),
    E("socket", e_socket, true, false),     E("tunnel", e_tunnel, true, false),
    E("cmp", e_cmp, true, false),           E("range", e_range, true, false),
    E("immediate", e_immediate, true, false), E("counter", e_counter, true, false),
    E("connlimit", e_connlimit, true, false), E("bitwise", e_bitwise, true, false),
    E("target", e_target, true, false),     E("match", e_match, true, false),
    E("nat", e_nat, true, false),           E("tproxy", e_tproxy, true, false),
    E("lookup", e_lookup, true, false),     E("dynset", e_dynset, true, true),
    E("log", e_log, true, false),           E("exthdr", e_exthdr, true, false),
    E("ct", e_ct, true, false),             E("byteorder", e_byteorder, true, false),
    E("limit", e_limit, true, false),       E("reject", e_reject, true, false),
    E("queue", e_queue, true, false),       E("quota", e_quota, true, false),
    E("masq", e_masq, true, false),         E("redir", e_redir, true, false),
    E("dup", e_dup, true, false),           E("flow_offload", e_flow, true, false),
    E("fwd", e_fwd, true, false),           E("hash", e_hash, true, false),
    E("fib", e_fib, true, false),           E("objref", e_objref, true, false),
    E("osf", e_osf, true, false),           E("xfrm", e_xfrm, true, false),
    E("synproxy", e_synproxy, true, false), E("last", e_last, true, false),
    E("notrack", e_notrack, true, false),
};
#undef E

const ExprSpec *findExpr(std::string_view name) {
  for (const auto &e : kExprs)
    if (name == e.name) return &e;
  return nullptr;
}

const char *attrKindName(AttrKind k) {
  switch (k) {
    case K::None: return "undefined";
    case K::U8: return "u8";
    case K::U16: return "u16";
    case K::U32: return "u32";
    case K::U64: return "u64";
    case K::Str: return "string";
    case K::Data: return "data";
    case K::UserData: return "userdata";
    case K::Concat: return "concat";
    case K::Devices: return "devices";
    case K::Pointer: return "pointer";
    case K::XtInfo: return "xt info";
    case K::ObjTyped: return "typed";
  }
  return "?";
}

// ---- errors ------------------------------------------------------------------------------------

WireError::WireError(size_t offset, const std::string &reason)
    : std::runtime_error("nftlink: malformed transaction at byte " + std::to_string(offset) + ": " + reason) {}

// ---- reader ------------------------------------------------------------------------------------

void Reader::fail(size_t k, const char *what) const {
  throw WireError(pos(), std::string(what) + " needs " + std::to_string(k) + " bytes, " +
                            std::to_string(n_ - pos_) + " left");
}

namespace {

size_t align4(size_t n) { return (n + 3) & ~size_t(3); }

// Upper bound of what libnftnl writes for one attribute: its own header and padding, plus at most two
// levels of nesting (data registers go in NFTA_*_DATA > NFTA_DATA_VALUE, verdicts one deeper).
size_t attrBound(const AttrView &a) {
  switch (a.kind) {
    case K::Concat:  // each length becomes NFTA_LIST_ELEM > NFTA_SET_FIELD_LEN (u32)
    case K::Devices:  // each name becomes its own NFTA_DEVICE_NAME attribute
      return 64 + 16 * size_t(a.len);
    case K::XtInfo:  // one flat attribute, copied as it is
      return 32 + align4(a.len);
    default:
      return 32 + 2 * align4(a.len);
  }
}

std::string attrLabel(const char *ctx, uint16_t id, const AttrSpec *spec) {
  std::string s = std::string(ctx) + " attribute " + std::to_string(id);
  if (spec) s += std::string(" (") + spec->name + ")";
  return s;
}

void checkValue(const AttrView &a, const char *ctx, const AttrSpec &spec) {
  auto fail = [&](const std::string &why) { throw WireError(a.offset, attrLabel(ctx, a.id, &spec) + " " + why); };
  const uint32_t len = a.len;
  auto fixed = [&](uint32_t want) {
    if (len != want)
      fail("is " + std::to_string(len) + " bytes, must be exactly " + std::to_string(want) + " (" +
           attrKindName(spec.kind) + ")");
  };
  switch (spec.kind) {
    case K::None:
      if (std::strcmp(spec.name, "name") == 0 && a.id == 0)
        fail("is NFTNL_EXPR_NAME, which cannot be set; the name goes in the expression's name field");
      fail("is not defined in libnftnl 1.2.4 (or its setter refuses it)");
      break;
    case K::Pointer:
      fail("is a libnftnl object pointer and cannot be sent; put expressions in the expression list");
      break;
    case K::XtInfo:
      if (len == 0) fail("is empty, needs 1 to " + std::to_string(kXtInfoMax) + " bytes");
      if (len > kXtInfoMax) fail("is " + std::to_string(len) + " bytes, at most " + std::to_string(kXtInfoMax));
      break;
    case K::ObjTyped:  // checked by checkObjectTyped once the object's type is known
      if (len > kStrMax) fail("is " + std::to_string(len) + " bytes, at most " + std::to_string(kStrMax));
      break;
    case K::U8: fixed(1); break;
    case K::U16: fixed(2); break;
    case K::U32: fixed(4); break;
    case K::U64: fixed(8); break;
    case K::Str: {
      if (len == 0) fail("is an empty string attribute (needs its terminating NUL)");
      if (len > kStrMax) fail("is " + std::to_string(len) + " bytes, at most " + std::to_string(kStrMax));
      const void *nul = std::memchr(a.data, 0, len);
      if (nul == nullptr) fail("is not NUL-terminated within its " + std::to_string(len) + " bytes");
      if (static_cast<const uint8_t *>(nul) != a.data + len - 1)
        fail("has a NUL at byte " + std::to_string(static_cast<const uint8_t *>(nul) - a.data) +
             " before its end");
      break;
    }
    case K::Data:
      if (len == 0) fail("is empty, needs 1 to " + std::to_string(kDataMax) + " bytes");
      if (len > kDataMax) fail("is " + std::to_string(len) + " bytes, at most " + std::to_string(kDataMax));
      break;
    case K::UserData:
      if (len > kUserDataMax)
        fail("is " + std::to_string(len) + " bytes, at most " + std::to_string(kUserDataMax));
      break;
    case K::Concat:
      if (len == 0 || len > kConcatMax)
        fail("has " + std::to_string(len) + " field lengths, needs 1 to " + std::to_string(kConcatMax));
      for (uint32_t i = 0; i < len; i++)
        if (a.data[i] == 0) fail("field length " + std::to_string(i) + " is zero");
      break;
    case K::Devices: {
      if (len == 0) fail("is empty");
      if (a.data[len - 1] != 0) fail("does not end with a NUL");
      uint32_t count = 0, start = 0;
      for (uint32_t i = 0; i < len; i++) {
        if (a.data[i] != 0) continue;
        if (i == start) fail("has an empty device name at byte " + std::to_string(i));
        if (i - start >= kStrMax) fail("has a device name longer than " + std::to_string(kStrMax - 1));
        count++;
        start = i + 1;
      }
      if (count > kDevicesMax) fail("names " + std::to_string(count) + " devices, at most " +
                                    std::to_string(kDevicesMax));
      break;
    }
  }
}

// Reads u16 attrCount + attrs, validating each against `spec`; `put` receives each checked attribute.
template <typename Put>
uint64_t readAttrsInto(Reader &r, const char *ctx, const AttrSpec *specs, uint16_t nspecs, uint16_t *countOut,
                       Put put) {
  const size_t countAt = r.pos();
  const uint16_t count = r.u16("attribute count");
  // Each attribute is at least 6 bytes: do not let a forged count reserve memory we cannot fill.
  if (size_t(count) * 6 > r.remaining())
    throw WireError(countAt, std::string(ctx) + " declares " + std::to_string(count) + " attributes but only " +
                                 std::to_string(r.remaining()) + " bytes follow");
  *countOut = count;
  uint64_t seen = 0;
  for (uint16_t i = 0; i < count; i++) {
    AttrView a;
    a.offset = r.pos();
    a.id = r.u16("attribute id");
    a.len = r.u32("attribute length");
    if (a.len > r.remaining())
      throw WireError(a.offset, attrLabel(ctx, a.id, nullptr) + " says " + std::to_string(a.len) +
                                    " bytes but only " + std::to_string(r.remaining()) + " follow");
    a.data = r.bytes(a.len, "attribute value");
    if (a.id >= nspecs)
      throw WireError(a.offset, attrLabel(ctx, a.id, nullptr) + " is past the maximum id " +
                                    std::to_string(nspecs - 1));
    const AttrSpec &spec = specs[a.id];
    a.kind = spec.kind;
    if (seen & (uint64_t(1) << a.id))
      throw WireError(a.offset, attrLabel(ctx, a.id, &spec) + " is given twice");
    seen |= uint64_t(1) << a.id;
    checkValue(a, ctx, spec);
    put(i, a);
  }
  return seen;
}

// libnftnl keeps a data value and a verdict's chain name in one union (nftnl_data_reg: val[] overlays
// {verdict, chain}): setting DATA after CHAIN overwrites the strdup'ed pointer, which libnftnl then
// frees. A value and a verdict never belong together, so refuse the pair instead of crashing.
constexpr uint64_t bit(unsigned id) { return uint64_t(1) << id; }
bool dataAndVerdict(uint64_t seen, unsigned data, unsigned verdict, unsigned chain) {
  return (seen & bit(data)) && (seen & (bit(verdict) | bit(chain)));
}
[[noreturn]] void failDataVerdict(size_t at, const std::string &ctx, unsigned data, unsigned verdict, unsigned chain) {
  throw WireError(at, ctx + " has both a data value (attribute " + std::to_string(data) +
                          ") and a verdict (attributes " + std::to_string(verdict) + "/" + std::to_string(chain) +
                          "); it may carry only one");
}

std::vector<AttrView> readAttrs(Reader &r, const char *ctx, const AttrSpec *specs, uint16_t nspecs) {
  std::vector<AttrView> out;
  uint16_t count = 0;
  bool reserved = false;
  readAttrsInto(r, ctx, specs, nspecs, &count, [&](uint16_t, const AttrView &a) {
    if (!reserved) out.reserve(count), reserved = true;
    out.push_back(a);
  });
  return out;
}

std::vector<ExprView> readExprs(Reader &r, const char *ctx, int depth, size_t *bound);

// An xtables match/target names its extension (libnftnl would truncate a longer name and the kernel
// look up another one) and carries its info: without either the kernel has nothing to load.
void checkXt(const ExprView &e, const std::string &ctx) {
  const AttrView *name = nullptr;
  bool info = false;
  for (const auto &a : e.attrs) {
    if (a.id == 1) name = &a;
    if (a.id == 3) info = true;
  }
  if (name == nullptr || !info)
    throw WireError(e.offset, "expression \"" + ctx + "\" needs its extension's name (attribute 1) and info (attribute 3)");
  if (name->len > kXtNameMax)
    throw WireError(name->offset, attrLabel(ctx.c_str(), name->id, &e.spec->attrs[1]) + " is " + std::to_string(name->len) +
                                      " bytes, at most " + std::to_string(kXtNameMax) + " with its NUL");
}

bool isXt(const ExprSpec *spec) { return spec->count > 3 && spec->attrs[3].kind == K::XtInfo; }

bool hasXt(const std::vector<ExprView> &exprs) {
  for (const auto &e : exprs)
    if (isXt(e.spec) || hasXt(e.children)) return true;
  return false;
}

ExprView readExpr(Reader &r, int depth, size_t *bound) {
  ExprView e;
  e.offset = r.pos();
  const uint8_t nameLen = r.u8("expression name length");
  if (nameLen == 0) throw WireError(e.offset, "expression name is empty");
  const uint8_t *name = r.bytes(nameLen, "expression name");
  std::string_view sv(reinterpret_cast<const char *>(name), nameLen);
  e.spec = findExpr(sv);
  std::string printable;
  for (uint8_t c : sv) printable += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  if (e.spec == nullptr) throw WireError(e.offset, "unknown expression \"" + printable + "\"");
  if (!e.spec->commit) throw WireError(e.offset, "expression \"" + printable + "\" cannot be sent");
  const std::string ctx = std::string(e.spec->name);
  e.attrs = readAttrs(r, ctx.c_str(), e.spec->attrs, e.spec->count);
  if (std::strcmp(e.spec->name, "immediate") == 0) {
    uint64_t seen = 0;
    for (const auto &a : e.attrs) seen |= bit(a.id);
    if (dataAndVerdict(seen, 2 /*DATA*/, 3 /*VERDICT*/, 4 /*CHAIN*/))
      failDataVerdict(e.offset, "expression \"immediate\"", 2, 3, 4);
  }
  if (isXt(e.spec)) checkXt(e, ctx);
  size_t b = 64 + nameLen;
  for (const auto &a : e.attrs) b += attrBound(a);
  const size_t childAt = r.pos();
  if (e.spec->children && depth == 0) {
    e.children = readExprs(r, (ctx + " nested").c_str(), depth + 1, &b);
  } else {
    const uint16_t n = r.u16("expression count");
    if (n != 0)
      throw WireError(childAt, "expression \"" + ctx + "\" has " + std::to_string(n) +
                                   " nested expressions; only a top-level dynset may have them");
  }
  *bound += b;
  return e;
}

void readExprsInto(Reader &r, const char *ctx, int depth, size_t *bound, std::vector<ExprView> &out) {
  const size_t at = r.pos();
  const uint16_t count = r.u16("expression count");
  // An expression is at least 6 bytes (nameLen, 1-byte name, two counts).
  if (size_t(count) * 6 > r.remaining())
    throw WireError(at, std::string(ctx) + " declares " + std::to_string(count) + " expressions but only " +
                            std::to_string(r.remaining()) + " bytes follow");
  out.clear();
  if (count == 0) return;
  out.reserve(count);
  for (uint16_t i = 0; i < count; i++) {
    out.push_back(readExpr(r, depth, bound));
    *bound += 16;  // NFTA_LIST_ELEM wrapper
  }
}

std::vector<ExprView> readExprs(Reader &r, const char *ctx, int depth, size_t *bound) {
  std::vector<ExprView> out;
  readExprsInto(r, ctx, depth, bound, out);
  return out;
}

// A named object's typed attributes (16 and up) against its type's table: NFTNL_OBJ_TYPE must be
// given with them, and be a type nftlink sends.
void checkObjectTyped(const OpView &op, const std::string &opName) {
  const AttrView *type = nullptr;
  for (const auto &a : op.attrs)
    if (a.id == 2 /*NFTNL_OBJ_TYPE*/) type = &a;
  uint32_t t = 0;
  if (type != nullptr) std::memcpy(&t, type->data, 4);
  const ObjectSpec *spec = type != nullptr ? objTypeSpec(t) : nullptr;
  if (type != nullptr && spec == nullptr)
    throw WireError(type->offset, opName + ": object type " + std::to_string(t) +
                                      " is not one nftlink sends (1 counter, 2 quota, 3 ct helper, 4 limit, "
                                      "7 ct timeout, 8 secmark, 9 ct expectation, 10 synproxy)");
  for (const auto &a : op.attrs) {
    if (a.id < kObjBase) continue;
    if (spec == nullptr)
      throw WireError(a.offset, opName + ": object attribute " + std::to_string(a.id) +
                                    " depends on the object's type, and the object has none (attribute 2)");
    if (a.id - kObjBase >= spec->count)
      throw WireError(a.offset, opName + ": object attribute " + std::to_string(a.id) + " is not defined for a " +
                                    spec->name + " (ids 16.." + std::to_string(kObjBase + spec->count - 1) + ")");
    const AttrSpec &as = spec->attrs[a.id - kObjBase];
    const std::string ctx = std::string(spec->name);
    if (as.kind == K::ObjTyped) {  // the ct timeout array
      const uint32_t want = uint32_t(sizeof(uint32_t)) * NFTNL_CTTIMEOUT_ARRAY_MAX;
      if (a.len != want)
        throw WireError(a.offset, attrLabel(ctx.c_str(), a.id, &as) + " is " + std::to_string(a.len) +
                                      " bytes, must be exactly " + std::to_string(want));
      continue;
    }
    AttrView typed = a;
    typed.kind = as.kind;
    checkValue(typed, ctx.c_str(), as);
    if (t == 3 /*ct helper*/ && a.id == kObjBase && a.len > 16)
      throw WireError(a.offset, opName + ": ct helper name is " + std::to_string(a.len - 1) +
                                    " bytes, at most 15 (NFT_CT_HELPER_NAME_LEN)");
  }
}

bool msgTypeMatches(uint8_t kind, uint8_t t) {
  switch (kind) {
    case kTable: return t == kNewTable || t == kDelTable || t == kDestroyTable;
    case kChain: return t == kNewChain || t == kDelChain || t == kDestroyChain;
    case kRule: return t == kNewRule || t == kDelRule || t == kDestroyRule;
    case kSet: return t == kNewSet || t == kDelSet || t == kDestroySet;
    case kElements: return t == kNewSetElem || t == kDelSetElem || t == kDestroySetElem;
    case kObject: return t == kNewObj || t == kDelObj || t == kDestroyObj;
    case kFlowtable: return t == kNewFlowtable || t == kDelFlowtable || t == kDestroyFlowtable;
  }
  return false;
}

// NLM_F_REPLACE 0x100 (also NLM_F_NONREC), NLM_F_EXCL 0x200, NLM_F_CREATE 0x400, NLM_F_APPEND 0x800,
// and NLM_F_ECHO 0x8 (NEWRULE only, see below).
constexpr uint16_t kEchoNlFlag = 0x0008;
constexpr uint16_t kAllowedNlFlags = 0x0F00 | kEchoNlFlag;

}  // namespace

void RequestReader::nextOp(OpView &op) {
  Reader &r = r_;
  const uint32_t index = opIndex_++;
  op.offset = r.pos();
  r.need(8, "operation header");
  op.msgType = r.u8("msgType");
  op.kind = r.u8("kind");
  op.nlFlags = r.u16("nlFlags");
  op.family = r.u8("family");
  const uint8_t *pad = r.bytes(3, "padding");
  const std::string opName = "operation " + std::to_string(index);
  if (op.kind > kKindMax || op.kind == 5)
    throw WireError(op.offset + 1, opName + " has unknown kind " + std::to_string(op.kind) + " (0..4, 6, 7)");
  if (!msgTypeMatches(op.kind, op.msgType))
    throw WireError(op.offset, opName + ": message type " + std::to_string(op.msgType) + " is not a " +
                                   kObjects[op.kind].name + " verb");
  if (op.nlFlags & ~kAllowedNlFlags)
    throw WireError(op.offset + 2, opName + ": nlFlags 0x" + [&] {
      char b[8];
      snprintf(b, sizeof b, "%04x", op.nlFlags);
      return std::string(b);
    }() + " has bits outside ECHO|CREATE|EXCL|REPLACE|APPEND (0x0f08); NLM_F_ACK is never needed");
  // The commit reads back only echoed rules (their handles); an echo of anything else would only
  // fill the receive queue.
  if ((op.nlFlags & kEchoNlFlag) && !(op.kind == kRule && op.msgType == kNewRule))
    throw WireError(op.offset + 2, opName + ": NLM_F_ECHO (0x0008) is only for NEWRULE (it returns the rule's handle)");
  if (pad[0] | pad[1] | pad[2]) throw WireError(op.offset + 5, opName + ": padding bytes are not zero");

  const ObjectSpec &spec = kObjects[op.kind];
  op.attrs = readAttrs(r, spec.name, spec.attrs, spec.count);
  size_t bound = 1024;
  for (const auto &a : op.attrs) {
    if (op.kind == kElements && a.id != 0 /*TABLE*/ && a.id != 1 /*NAME*/ && a.id != 8 /*ID*/)
      throw WireError(a.offset, "elements attribute " + std::to_string(a.id) + " (" + kSetAttrs[a.id].name +
                                    ") does not name a set; only table (0), name (1) and id (8) do");
    bound += attrBound(a);
  }
  if (op.kind == kObject) checkObjectTyped(op, opName);
  const size_t exprAt = r.pos();
  op.exprs.clear();
  if (op.kind == kRule || op.kind == kSet) {
    readExprsInto(r, spec.name, 0, &bound, op.exprs);
  } else {
    const uint16_t n = r.u16("expression count");
    if (n != 0)
      throw WireError(exprAt, opName + ": a " + spec.name + " has no expressions, got " + std::to_string(n));
  }
  // The addon's after-the-fact check of nest lengths (commit.cc) can be fooled when one attribute
  // alone is near 64 KiB: the wrapped length of the nest around it can parse as consistent. Only an
  // xt info is that large, so a rule or set holding one must fit by its upper bound.
  if (bound > kNestMax && hasXt(op.exprs))
    throw WireError(exprAt, opName + ": its expressions, xtables info included, may need " + std::to_string(bound) +
                                " bytes, more than the 65535 of a netlink nest");
  op.bound = bound;
  op.elemCount = 0;
  if (op.kind == kElements) {
    const size_t countAt = r.pos();
    const uint32_t n = r.u32("element count");
    if (size_t(n) * 4 > r.remaining())  // an element is at least 4 bytes (two counts)
      throw WireError(countAt, opName + " declares " + std::to_string(n) + " elements but only " +
                                   std::to_string(r.remaining()) + " bytes follow");
    op.elemCount = n;
  }
}

void RequestReader::nextElem(const OpView &op, uint32_t i, ElemView &e) {
  Reader &r = r_;
  e.offset = r.pos();
  e.attrCount = 0;
  uint16_t declared = 0;
  size_t eb = 64;
  const uint64_t seen =
      readAttrsInto(r, "element", kElemAttrs, NFTLINK_COUNT(kElemAttrs), &declared, [&](uint16_t, const AttrView &a) {
        // Ids are below kElemAttrMax and never repeat (both checked before we get here).
        if (e.attrCount >= kElemAttrMax) throw std::logic_error("nftlink: internal error: element attribute overflow");
        e.attrs[e.attrCount++] = a;
        eb += attrBound(a);
      });
  if (dataAndVerdict(seen, 4 /*DATA*/, 2 /*VERDICT*/, 3 /*CHAIN*/))
    failDataVerdict(e.offset, "operation " + std::to_string(opIndex_ - 1) + " element " + std::to_string(i), 4, 2, 3);
  readExprsInto(r, "element", 1 /* no dynset children inside elements */, &eb, e.exprs);
  if (eb > kElemBoundMax)
    throw WireError(e.offset, "operation " + std::to_string(opIndex_ - 1) + " element " + std::to_string(i) +
                                  " may need " + std::to_string(eb) + " bytes of netlink, more than the " +
                                  std::to_string(kElemBoundMax) + " an element may take in a 64 KiB element-list nest");
  (void)op;
  e.bound = eb;
}

RequestReader::RequestReader(const uint8_t *buf, size_t len) : r_(buf, len) {
  Reader &r = r_;
  r.need(kHeaderSize, "header");
  const uint32_t magic = r.u32("magic");
  if (magic != kMagic) {
    char b[64];
    snprintf(b, sizeof b, "magic is 0x%08x, expected 0x%08x (\"NFTL\")", magic, kMagic);
    throw WireError(0, b);
  }
  const uint16_t version = r.u16("version");
  if (version != kVersion)
    throw WireError(4, "version " + std::to_string(version) + " is not supported (expected " +
                           std::to_string(kVersion) + ")");
  flags_ = r.u16("flags");
  if (flags_ & ~(kFlagCheck | kFlagGenid))
    throw WireError(6, "unknown header flags 0x" + [&] {
      char b[8];
      snprintf(b, sizeof b, "%04x", flags_);
      return std::string(b);
    }() + " (known: 1 CHECK, 2 GENID)");
  genid_ = r.u32("genid");
  count_ = r.u32("count");
  // An operation is at least 12 bytes (8-byte header and two counts).
  if (size_t(count_) * 12 > r.remaining())
    throw WireError(12, "header declares " + std::to_string(count_) + " operations but only " +
                            std::to_string(r.remaining()) + " bytes follow");
}

RequestReader RequestReader::part(const uint8_t *buf, size_t len, size_t base, uint32_t firstOp, uint32_t count) {
  // An operation is at least 12 bytes, as in the header check.
  if (size_t(count) * 12 > len)
    throw WireError(base, "a part of " + std::to_string(len) + " bytes cannot hold the " + std::to_string(count) +
                              " operations it declares");
  return RequestReader(buf, len, base, firstOp, count);
}

void RequestReader::finish() const {
  if (r_.remaining() != 0)
    throw WireError(r_.pos(), std::to_string(r_.remaining()) + " trailing bytes after the last operation");
}

// ---- writer ------------------------------------------------------------------------------------

void Writer::grow(size_t want) {
  if (want < 4096) want = 4096;
  void *p = std::realloc(buf_, want);
  if (p == nullptr) throw std::bad_alloc();
  buf_ = static_cast<uint8_t *>(p);
  cap_ = want;
}

}  // namespace nftlink
