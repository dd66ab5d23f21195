#include "memory.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21  // Linux 5.4 (include/uapi/asm-generic/mman-common.h)
#endif

namespace nftlink {

// malloc_trim(0) releases whole free pages anywhere in every arena, not only at a heap's top as
// free() does. What a big sync left free there (the addon's buffers, V8's compiler zones on its
// helper thread) otherwise stays in the process's RSS.
Napi::Value TrimMemory(const Napi::CallbackInfo &info) {
#ifdef __GLIBC__
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

// The node executable is about 120 MB of code and read-only data (V8, ICU's tables, node's own
// JavaScript sources), and starting up maps about 50 MB of it: the bootstrap, the module loader,
// the compilers' first runs, and whatever the kernel's fault-around and readahead brought in
// beside each page touched. A proxy idle after its sync runs a small part of that again.
// MADV_PAGEOUT reclaims the pages now (clean file pages: nothing is written), unlike MADV_COLD,
// which only ages them; a page only this process maps leaves the page cache too, so it stops
// counting in the process's RSS and its cgroup's memory, and a page touched again is read back as
// any evicted file page is. Pages other processes map are left alone by the kernel (Linux 6.18
// madvise_cold_or_pageout_pte_range skips folios mapped more than once). Only the executable's
// own file mappings without write permission: anonymous memory (the JavaScript heap, JIT code)
// would lose its contents, and a written private page (relocations) its changes.
Napi::Value ReleaseExecutablePages(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return Napi::Number::New(env, 0);
  exe[n] = '\0';
  FILE *maps = fopen("/proc/self/maps", "re");
  if (!maps) return Napi::Number::New(env, 0);
  double advised = 0;
  char line[PATH_MAX + 128];
  while (fgets(line, sizeof line, maps)) {
    unsigned long start = 0, end = 0;
    char perms[5] = {0};
    int pathAt = 0;
    // start-end perms offset dev inode path
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &pathAt) < 3 || pathAt == 0) continue;
    if (perms[1] == 'w') continue;
    std::string path(line + pathAt);
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    if (path != exe) continue;
    if (madvise(reinterpret_cast<void *>(start), end - start, MADV_PAGEOUT) == 0) advised += double(end - start);
    else if (errno == EINVAL) break;  // no MADV_PAGEOUT in this kernel
  }
  fclose(maps);
  return Napi::Number::New(env, advised);
}

}  // namespace nftlink
