/* Build glue for the prebuilt addon only (binding.gyp, NFTLINK_STATIC_ROOT; scripts/build-prebuilt.sh).
 *
 * Debian builds its static archives as position-independent executable code, which reads libc's
 * `stderr` variable PC-relative, as if it lived in the same binary. Inside a shared object (the
 * addon) it cannot: libc's variable is in libc.so. So build-prebuilt.sh renames libnftnl.a's
 * references to `nftlink_static_stderr` (objcopy --redefine-sym), a hidden variable of the addon's
 * own that holds the same FILE pointer, set when the addon loads. libnftnl uses it only for its
 * diagnostics (nftnl_assert). */
#include <stdio.h>

__attribute__((visibility("hidden"))) FILE *nftlink_static_stderr;

__attribute__((constructor)) static void nftlink_static_stderr_init(void) {
  nftlink_static_stderr = stderr;
}
