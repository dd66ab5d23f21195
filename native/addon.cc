// Module init and the JS surface (native/README.md): argument checking happens here, on the JS
// thread; everything that talks to the kernel runs in a worker (commit.cc, dump.cc, generation.cc,
// conntrack.cc).
#include <napi.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commit-stream.h"
#include "commit.h"
#include "conntrack.h"
#include "dump.h"
#include "generation.h"
#include "memory.h"
#include "monitor.h"
#include "relay.h"
#include "socket.h"
#include "wire.h"

namespace nftlink {
namespace {

// Marks externals made by open(), so a foreign External is refused instead of dereferenced.
constexpr napi_type_tag kHandleTag = {0x6e66746c696e6b21ULL, 0x68616e646c650001ULL};

using HandleRef = std::shared_ptr<Handle>;

Napi::Value rejected(Napi::Env env, Napi::Error err) {
  auto d = Napi::Promise::Deferred::New(env);
  d.Reject(err.Value());
  return d.Promise();
}

// Returns nullptr and sets *why when `v` is not a live handle from open().
HandleRef handleFrom(const Napi::Value &v, std::string *why) {
  if (!v.IsExternal()) {
    *why = "nftlink: expected a handle from open() as the first argument";
    return nullptr;
  }
  auto ext = v.As<Napi::External<HandleRef>>();
  if (!ext.CheckTypeTag(&kHandleTag)) {
    *why = "nftlink: the first argument is an External that open() did not create";
    return nullptr;
  }
  HandleRef h = *ext.Data();
  if (!h || h->closed.load()) {
    *why = "nftlink: the handle is closed";
    return nullptr;
  }
  return h;
}

bool isInteger(const Napi::Value &v, double lo, double hi, double *out) {
  if (!v.IsNumber()) return false;
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::floor(d) != d || d < lo || d > hi) return false;
  *out = d;
  return true;
}

bool optionalString(const Napi::Value &v, bool *has, std::string *out) {
  if (v.IsUndefined() || v.IsNull()) {
    *has = false;
    return true;
  }
  if (!v.IsString()) return false;
  *out = v.As<Napi::String>().Utf8Value();
  *has = true;
  return true;
}

// open()'s and monitorOpen()'s namespace argument; `fn` names the call in a TypeError.
NetnsTarget netnsFrom(Napi::Env env, const Napi::Value &arg, const char *fn) {
  NetnsTarget ns;
  const std::string prefix = std::string("nftlink: ") + fn + "(): ";
  if (arg.IsUndefined() || arg.IsNull()) {
    ns.type = NetnsTarget::Current;
  } else if (arg.IsString()) {
    std::string s = arg.As<Napi::String>().Utf8Value();
    if (s.empty() || s.find('\0') != std::string::npos)
      throw Napi::TypeError::New(env, prefix + "the namespace name is empty or contains a NUL");
    ns.type = NetnsTarget::Path;
    // A bare name is what `ip netns add NAME` creates: a bind mount under /run/netns.
    ns.path = s.find('/') == std::string::npos ? "/run/netns/" + s : s;
  } else if (arg.IsNumber()) {
    double d;
    if (!isInteger(arg, 0, 2147483647.0, &d))
      throw Napi::TypeError::New(env, prefix + "a namespace fd must be a non-negative integer");
    ns.type = NetnsTarget::Fd;
    ns.fd = int(d);
  } else {
    throw Napi::TypeError::New(env, prefix + "netns must be a name, a path, an open namespace fd, or omitted");
  }
  return ns;
}

Napi::Value Open(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const NetnsTarget ns = netnsFrom(env, info.Length() > 0 ? info[0] : env.Undefined(), "open");
  HandleRef h = std::make_shared<Handle>();
  try {
    h->sock = NlSocket::open(ns);
    h->portid = h->sock->portid();
  } catch (const std::exception &e) {
    throw Napi::Error::New(env, e.what());
  }
  auto ext = Napi::External<HandleRef>::New(env, new HandleRef(std::move(h)),
                                            [](Napi::Env, HandleRef *p) { delete p; });
  ext.TypeTag(&kHandleTag);
  return ext;
}

Napi::Value Close(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsExternal())
    throw Napi::TypeError::New(env, "nftlink: close(): expected a handle from open()");
  auto ext = info[0].As<Napi::External<HandleRef>>();
  if (!ext.CheckTypeTag(&kHandleTag))
    throw Napi::TypeError::New(env, "nftlink: close(): the argument is an External that open() did not create");
  HandleRef h = *ext.Data();
  if (!h) return env.Undefined();
  h->closed.store(true);
  // If a worker holds the socket it releases it when it finishes (worker.h); never block the JS
  // thread waiting for the kernel.
  std::unique_lock<std::mutex> lock(h->mu, std::try_to_lock);
  if (lock.owns_lock()) h->sock.reset();
  return env.Undefined();
}

Napi::Value Commit(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) return rejected(env, Napi::Error::New(env, why));
  if (info.Length() < 2 || !info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    return rejected(env, Napi::TypeError::New(env, "nftlink: commit(): the request must be a Uint8Array"));
  return startCommit(env, std::move(h), requestOf(info[1].As<Napi::Uint8Array>()));
}

// ---- streamed commits (commit-stream.h) ---------------------------------------------------------

constexpr napi_type_tag kStreamTag = {0x6e66746c696e6b21ULL, 0x73747265616d0001ULL};

using StreamRef = std::shared_ptr<CommitStream>;

// Returns nullptr and sets *why when `v` is not a stream from commitStream().
StreamRef streamFrom(const Napi::Value &v, const char *fn, std::string *why) {
  if (!v.IsExternal() || !v.As<Napi::External<StreamRef>>().CheckTypeTag(&kStreamTag)) {
    *why = std::string("nftlink: ") + fn + "(): the first argument must be a stream from commitStream()";
    return nullptr;
  }
  return *v.As<Napi::External<StreamRef>>().Data();
}

Napi::Value CommitStreamStart(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) throw Napi::Error::New(env, why);
  auto ext = Napi::External<StreamRef>::New(env, new StreamRef(std::make_shared<CommitStream>(std::move(h))),
                                            [](Napi::Env, StreamRef *s) { delete s; });
  ext.TypeTag(&kStreamTag);
  return ext;
}

Napi::Value CommitStreamFeed(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  StreamRef s = streamFrom(info[0], "commitStreamFeed", &why);
  if (!s) throw Napi::TypeError::New(env, why);
  if (info.Length() < 2 || !info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw Napi::TypeError::New(env, "nftlink: commitStreamFeed(): the part must be a Uint8Array");
  double count;
  if (!isInteger(info[2], 0, 4294967295.0, &count))
    throw Napi::TypeError::New(env, "nftlink: commitStreamFeed(): `operations` must be an integer (0..2^32-1)");
  try {
    s->feed(env, info[1].As<Napi::Uint8Array>(), uint32_t(count));
  } catch (const std::logic_error &e) {
    throw Napi::Error::New(env, e.what());
  } catch (const std::bad_alloc &) {
    throw Napi::Error::New(env, "nftlink: out of memory");
  }
  return env.Undefined();
}

Napi::Value CommitStreamEnd(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  StreamRef s = streamFrom(info[0], "commitStreamEnd", &why);
  if (!s) return rejected(env, Napi::TypeError::New(env, why));
  double flags, genid;
  if (!isInteger(info[1], 0, kFlagCheck | kFlagGenid, &flags))
    return rejected(env, Napi::TypeError::New(env, "nftlink: commitStreamEnd(): `flags` must be 0..3 (1 CHECK, 2 GENID)"));
  if (!isInteger(info[2], 0, 4294967295.0, &genid))
    return rejected(env, Napi::TypeError::New(env, "nftlink: commitStreamEnd(): `genid` must be an integer (0..2^32-1)"));
  return s->end(env, uint16_t(flags), uint32_t(genid));
}

Napi::Value CommitStreamCancel(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  StreamRef s = streamFrom(info[0], "commitStreamCancel", &why);
  if (!s) throw Napi::TypeError::New(env, why);
  s->cancel();
  return env.Undefined();
}

Napi::Value Dump(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) return rejected(env, Napi::Error::New(env, why));
  DumpSpec spec;
  double what, family;
  if (!isInteger(info[1], 1, kDumpFlagsMax, &what) || (uint32_t(what) & kDumpAll) == 0)
    return rejected(env, Napi::TypeError::New(env, "nftlink: dump(): `what` must be a bitmask of 1 tables, 2 chains, "
                                                   "4 sets, 8 elements, 16 rules, 32 objects, 64 flowtables (at least "
                                                   "one of them), 128 to leave out digested anonymous elements, 256 "
                                                   "to read rules chain by chain, 512 to leave out digested rules' "
                                                   "expressions, and 1024 to hash named sets' elements"));
  if (!isInteger(info[2], 0, 255, &family))
    return rejected(env, Napi::TypeError::New(env, "nftlink: dump(): `family` must be an NFPROTO_* number (0..255)"));
  if (!optionalString(info[3], &spec.hasTable, &spec.table))
    return rejected(env, Napi::TypeError::New(env, "nftlink: dump(): `table` must be a string or null"));
  if (info.Length() > 4 && !optionalString(info[4], &spec.hasChain, &spec.chain))
    return rejected(env, Napi::TypeError::New(env, "nftlink: dump(): `chain` must be a string or null"));
  if (spec.hasChain && !spec.hasTable)
    return rejected(env, Napi::TypeError::New(env, "nftlink: dump(): a `chain` needs its `table`"));
  if ((uint32_t(what) & kDumpRulesPerChain) && (!spec.hasTable || (uint32_t(what) & (kDumpChains | kDumpRules)) != (kDumpChains | kDumpRules)))
    return rejected(env, Napi::TypeError::New(env, "nftlink: dump(): rules chain by chain need a `table`, its chains and its rules"));
  if (info.Length() > 5 && !info[5].IsUndefined() && !info[5].IsNull()) {
    const char *bad = "nftlink: dump(): `omitElementsOf` must be an array of set names, with a `table`";
    if (!info[5].IsArray() || !spec.hasTable) return rejected(env, Napi::TypeError::New(env, bad));
    Napi::Array names = info[5].As<Napi::Array>();
    for (uint32_t i = 0; i < names.Length(); i++) {
      Napi::Value v = names.Get(i);
      if (!v.IsString()) return rejected(env, Napi::TypeError::New(env, bad));
      spec.omitElementsOf.push_back(v.As<Napi::String>().Utf8Value());
    }
  }
  spec.what = uint32_t(what);
  spec.family = uint8_t(family);
  return startDump(env, std::move(h), std::move(spec));
}

// The arguments dumpSetElements and dumpSetElementsStream share: (h, family, table, set). Returns
// the handle, or null with `error` set to the rejection to return.
HandleRef setElementsSpec(const Napi::CallbackInfo &info, const char *fn, DumpSpec *spec, Napi::Value *error) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) {
    *error = rejected(env, Napi::Error::New(env, why));
    return h;
  }
  double family;
  const std::string prefix = std::string("nftlink: ") + fn + "(): ";
  if (!isInteger(info[1], 1, 255, &family)) {
    *error = rejected(env, Napi::TypeError::New(env, prefix + "`family` must be the set's NFPROTO_* family (1..255)"));
    return nullptr;
  }
  if (!info[2].IsString() || !info[3].IsString()) {
    *error = rejected(env, Napi::TypeError::New(env, prefix + "`table` and `set` must be strings"));
    return nullptr;
  }
  spec->family = uint8_t(family);
  spec->hasTable = true;
  spec->table = info[2].As<Napi::String>().Utf8Value();
  spec->oneSet = true;
  spec->set = info[3].As<Napi::String>().Utf8Value();
  spec->what = kDumpElements;
  return h;
}

Napi::Value DumpSetElements(const Napi::CallbackInfo &info) {
  DumpSpec spec;
  Napi::Value error;
  HandleRef h = setElementsSpec(info, "dumpSetElements", &spec, &error);
  if (!h) return error;
  return startDump(info.Env(), std::move(h), std::move(spec));
}

Napi::Value DumpSetElementsStream(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  DumpSpec spec;
  Napi::Value error;
  HandleRef h = setElementsSpec(info, "dumpSetElementsStream", &spec, &error);
  if (!h) return error;
  if (!info[4].IsFunction())
    return rejected(env, Napi::TypeError::New(env, "nftlink: dumpSetElementsStream(): `onChunk` must be a function"));
  return startDumpStream(env, std::move(h), std::move(spec), info[4].As<Napi::Function>());
}

Napi::Value GetGeneration(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) return rejected(env, Napi::Error::New(env, why));
  return startGetGeneration(env, std::move(h));
}

// conntrackDelete(h, family, filters): each filter { protocol, dstPort, dst?, replySrc?, notNatted? }.
Napi::Value ConntrackDelete(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) return rejected(env, Napi::Error::New(env, why));
  double family;
  if (!isInteger(info[1], 0, 255, &family) || (family != 2 && family != 10))
    return rejected(env, Napi::TypeError::New(env, "nftlink: conntrackDelete(): `family` must be 2 (ipv4) or 10 (ipv6)"));
  if (info.Length() < 3 || !info[2].IsArray())
    return rejected(env, Napi::TypeError::New(env, "nftlink: conntrackDelete(): `filters` must be an array"));
  CtSpec spec;
  spec.family = uint8_t(family);
  const int af = family == 2 ? AF_INET : AF_INET6;
  auto arr = info[2].As<Napi::Array>();
  const uint32_t n = arr.Length();
  if (n > 1000000)
    return rejected(env, Napi::RangeError::New(env, "nftlink: conntrackDelete(): at most 1000000 filters"));
  spec.filters.reserve(n);
  auto bad = [&](uint32_t i, const std::string &what) {
    return rejected(env, Napi::TypeError::New(env, "nftlink: conntrackDelete(): filter " + std::to_string(i) + ": " + what));
  };
  auto address = [&](const Napi::Value &v, uint8_t *out) {
    if (!v.IsString()) return false;
    const std::string s = v.As<Napi::String>().Utf8Value();
    if (s.size() > 64 || s.find('\0') != std::string::npos) return false;
    return inet_pton(af, s.c_str(), out) == 1;
  };
  for (uint32_t i = 0; i < n; i++) {
    const Napi::Value item = arr.Get(i);
    if (!item.IsObject() || item.IsArray()) return bad(i, "not an object");
    const Napi::Object o = item.As<Napi::Object>();
    CtFilter f;
    double proto, port;
    if (!isInteger(o.Get("protocol"), 1, 255, &proto))
      return bad(i, "`protocol` must be an IP protocol number (UDP 17, SCTP 132, TCP 6)");
    if (!isInteger(o.Get("dstPort"), 1, 65535, &port)) return bad(i, "`dstPort` must be a port (1..65535)");
    f.protocol = uint8_t(proto);
    f.dstPort = uint16_t(port);
    const Napi::Value dst = o.Get("dst");
    if (!dst.IsUndefined() && !dst.IsNull()) {
      if (!address(dst, f.dst)) return bad(i, "`dst` is not an address of this family");
      f.hasDst = true;
    }
    const Napi::Value rs = o.Get("replySrc");
    if (!rs.IsUndefined() && !rs.IsNull()) {
      if (!address(rs, f.replySrc)) return bad(i, "`replySrc` is not an address of this family");
      f.hasReplySrc = true;
    }
    const Napi::Value nn = o.Get("notNatted");
    if (!nn.IsUndefined() && !nn.IsBoolean()) return bad(i, "`notNatted` must be a boolean");
    f.notNatted = nn.IsBoolean() && nn.As<Napi::Boolean>().Value();
    spec.filters.push_back(f);
  }
  return startConntrackDelete(env, std::move(h), std::move(spec));
}

// ---- the event monitor (monitor.h) ----------------------------------------------------------

constexpr napi_type_tag kMonitorTag = {0x6e66746c696e6b21ULL, 0x6d6f6e69746f0001ULL};

using MonitorRef = std::shared_ptr<Monitor>;

MonitorRef monitorFrom(const Napi::CallbackInfo &info, const char *fn) {
  const Napi::Value v = info.Length() > 0 ? info[0] : info.Env().Undefined();
  if (!v.IsExternal() || !v.As<Napi::External<MonitorRef>>().CheckTypeTag(&kMonitorTag))
    throw Napi::TypeError::New(info.Env(), std::string("nftlink: ") + fn + "(): expected a monitor from monitorOpen()");
  return *v.As<Napi::External<MonitorRef>>().Data();
}

// monitorOpen(netns, rcvbuf, onEvents(what, batch, message), skipPortid?).
Napi::Value MonitorOpen(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const NetnsTarget ns = netnsFrom(env, info.Length() > 0 ? info[0] : env.Undefined(), "monitorOpen");
  double rcvbuf;
  if (!isInteger(info[1], 4096, 1073741824.0, &rcvbuf))
    throw Napi::TypeError::New(env, "nftlink: monitorOpen(): `rcvbuf` must be a byte count (4096..2^30)");
  if (!info[2].IsFunction()) throw Napi::TypeError::New(env, "nftlink: monitorOpen(): `onEvents` must be a function");
  MonitorRef m;
  try {
    double skip = 0;
    if (info.Length() > 3 && !info[3].IsUndefined() && !isInteger(info[3], 0, 4294967295.0, &skip))
      throw Napi::TypeError::New(env, "nftlink: monitorOpen(): `skipPortid` must be a netlink port id");
    m = Monitor::open(env, ns, size_t(rcvbuf), info[2].As<Napi::Function>(), uint32_t(skip));
  } catch (const std::exception &e) {
    throw Napi::Error::New(env, e.what());
  }
  auto ext = Napi::External<MonitorRef>::New(env, new MonitorRef(std::move(m)), [](Napi::Env, MonitorRef *p) { delete p; });
  ext.TypeTag(&kMonitorTag);
  return ext;
}

Napi::Value MonitorPause(const Napi::CallbackInfo &info) {
  monitorFrom(info, "monitorPause")->pause();
  return info.Env().Undefined();
}

Napi::Value MonitorResume(const Napi::CallbackInfo &info) {
  monitorFrom(info, "monitorResume")->resume();
  return info.Env().Undefined();
}

Napi::Value MonitorClose(const Napi::CallbackInfo &info) {
  monitorFrom(info, "monitorClose")->close();
  return info.Env().Undefined();
}

Napi::Value MonitorInfo(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  MonitorRef m = monitorFrom(info, "monitorInfo");
  Napi::Object o = Napi::Object::New(env);
  o.Set("portid", Napi::Number::New(env, m->portid()));
  o.Set("rcvbuf", Napi::Number::New(env, double(m->rcvbuf())));
  o.Set("closed", Napi::Boolean::New(env, m->closed()));
  return o;
}

// portid(h): the port id the kernel bound the handle's socket to (what the monitor reports as the
// committer of this connection's transactions).
Napi::Value Portid(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string why;
  HandleRef h = handleFrom(info[0], &why);
  if (!h) throw Napi::Error::New(env, why);
  return Napi::Number::New(env, h->portid);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("open", Napi::Function::New(env, Open, "open"));
  exports.Set("close", Napi::Function::New(env, Close, "close"));
  exports.Set("commit", Napi::Function::New(env, Commit, "commit"));
  exports.Set("commitStream", Napi::Function::New(env, CommitStreamStart, "commitStream"));
  exports.Set("commitStreamFeed", Napi::Function::New(env, CommitStreamFeed, "commitStreamFeed"));
  exports.Set("commitStreamEnd", Napi::Function::New(env, CommitStreamEnd, "commitStreamEnd"));
  exports.Set("commitStreamCancel", Napi::Function::New(env, CommitStreamCancel, "commitStreamCancel"));
  exports.Set("dump", Napi::Function::New(env, Dump, "dump"));
  exports.Set("dumpSetElements", Napi::Function::New(env, DumpSetElements, "dumpSetElements"));
  exports.Set("dumpSetElementsStream", Napi::Function::New(env, DumpSetElementsStream, "dumpSetElementsStream"));
  exports.Set("getGeneration", Napi::Function::New(env, GetGeneration, "getGeneration"));
  exports.Set("conntrackDelete", Napi::Function::New(env, ConntrackDelete, "conntrackDelete"));
  exports.Set("portid", Napi::Function::New(env, Portid, "portid"));
  exports.Set("monitorOpen", Napi::Function::New(env, MonitorOpen, "monitorOpen"));
  exports.Set("monitorPause", Napi::Function::New(env, MonitorPause, "monitorPause"));
  exports.Set("monitorResume", Napi::Function::New(env, MonitorResume, "monitorResume"));
  exports.Set("monitorClose", Napi::Function::New(env, MonitorClose, "monitorClose"));
  exports.Set("monitorInfo", Napi::Function::New(env, MonitorInfo, "monitorInfo"));
  exports.Set("relayDial", Napi::Function::New(env, RelayDial, "relayDial"));
  exports.Set("relayCancel", Napi::Function::New(env, RelayCancel, "relayCancel"));
  exports.Set("relayCount", Napi::Function::New(env, RelayCount, "relayCount"));
  exports.Set("trimMemory", Napi::Function::New(env, TrimMemory, "trimMemory"));
  exports.Set("releaseExecutablePages", Napi::Function::New(env, ReleaseExecutablePages, "releaseExecutablePages"));
  return exports;
}

}  // namespace
}  // namespace nftlink

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return nftlink::Init(env, exports); }

NODE_API_MODULE(nftlink, InitModule)
