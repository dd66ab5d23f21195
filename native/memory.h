// What the process gives back to the kernel once it is idle: the C heap's free pages, and the pages
// of the node executable that starting up read and the proxy does not use again.
#pragma once

#include <napi.h>

namespace nftlink {

// trimMemory(): glibc's malloc_trim; whether anything was released (musl has no such call).
Napi::Value TrimMemory(const Napi::CallbackInfo &info);
// releaseExecutablePages(): MADV_PAGEOUT over the executable's read-only file mappings; the bytes
// of address range advised (0 where the kernel has no MADV_PAGEOUT, before Linux 5.4).
Napi::Value ReleaseExecutablePages(const Napi::CallbackInfo &info);

}  // namespace nftlink
