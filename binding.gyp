{
  "variables": {
    # NFTLINK_SANITIZE=1 (scripts/fuzz-asan.sh) adds ASan/UBSan; never set for a normal build.
    "nftlink_sanitize%": "<!(echo ${NFTLINK_SANITIZE:-0})"
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
        "native/monitor.cc",
        "native/generation.cc",
        "native/conntrack.cc",
        "native/relay.cc"
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
        "-Wextra",
        "<!@(pkg-config --cflags libnftnl libmnl)"
      ],
      "libraries": [
        "<!@(pkg-config --libs libnftnl libmnl)"
      ],
      "conditions": [
        ["nftlink_sanitize==1", {
          "cflags_cc": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    }
  ]
}
