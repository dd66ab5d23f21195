// The localhost NodePort proxy's byte relay: a client's TCP socket and the endpoint's, dialed here, copied both ways by
// splice(2) through a pipe per direction, on one epoll thread for every relayed connection. The
// bytes never enter userspace, and no JS runs per read or write (why: a relay in JS reached well
// under half the kernel path's throughput, docs/decisions.md). Half-close is kept: when one side ends, the other side's
// write half is shut down once the pipe is drained.
#pragma once

#include <napi.h>

namespace nftlink {

// relayDial(clientFd, address, port, timeoutMs): dials address:port from the relay thread and
// relays between it and the client: Promise<{ aToB, bToA, error }> (a: the client), its id as the
// promise's `relayId` property. The client fd is dup'ed: the caller keeps (and eventually closes)
// its own, and must not read from or write to it while the relay runs.
Napi::Value RelayDial(const Napi::CallbackInfo &info);
// relayCancel(id): ends a relay at once (both sockets shut down); its promise resolves as usual.
Napi::Value RelayCancel(const Napi::CallbackInfo &info);
// relayCount(): relays running (for leak tests).
Napi::Value RelayCount(const Napi::CallbackInfo &info);

}  // namespace nftlink
