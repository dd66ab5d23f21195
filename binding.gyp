{
  "variables": {
    # NFTLINK_SANITIZE=1 (scripts/fuzz-asan.sh) adds ASan/UBSan; never set for a normal build.
    "nftlink_sanitize%": "<!(echo ${NFTLINK_SANITIZE:-0})",
    # NFTLINK_STATIC_ROOT=DIR (scripts/build-prebuilt.sh): link libnftnl and libmnl statically from
    # DIR/usr/lib/x86_64-linux-gnu/*.a, with DIR/usr/include's headers, for the prebuilt addon that
    # needs no system library. Unset: the system's shared libraries, found with pkg-config.
    "nftlink_static_root%": "<!(echo ${NFTLINK_STATIC_ROOT:-})"
  },
  "targets": [
    {
      "target_name": "nftlink",
      "sources": [
        "native/addon.cc",
        "native/socket.cc",
        "native/wire.cc",
        "native/commit.cc",
        "native/commit-stream.cc",
        "native/echo.cc",
        "native/netlink-request.cc",
        "native/object-writer.cc",
        "native/dump.cc",
        "native/element-hash.cc",
        "native/monitor.cc",
        "native/generation.cc",
        "native/conntrack.cc",
        "native/relay.cc",
        "native/memory.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": [
        "-std=c++17",
        "-fexceptions",
        "-Wall",
        "-Wextra"
      ],
      "conditions": [
        ["nftlink_static_root==''", {
          "cflags_cc": ["<!@(pkg-config --cflags libnftnl libmnl)"],
          "libraries": ["<!@(pkg-config --libs libnftnl libmnl)"]
        }, {
          # libnftnl before libmnl: the linker resolves an archive's symbols from the ones after it.
          # --exclude-libs: the archives' symbols stay inside the addon (hidden), so they neither
          # clash with a libnftnl another module loads nor need PIC-only relocations (Debian builds
          # its static archives as PIE code).
          "sources": ["native/static-stderr.c"],
          "cflags_cc": ["-isystem", "<(nftlink_static_root)/usr/include"],
          "libraries": [
            "<(nftlink_static_root)/usr/lib/x86_64-linux-gnu/libnftnl.a",
            "<(nftlink_static_root)/usr/lib/x86_64-linux-gnu/libmnl.a"
          ],
          "ldflags": ["-Wl,--exclude-libs,ALL"]
        }],
        ["nftlink_sanitize==1", {
          "cflags_cc": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    }
  ]
}
