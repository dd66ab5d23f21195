// The two ends of the data-plane benchmark (npm run bench:dataplane), in C so that the client's own
// cost per connect is a few microseconds and the same for every ruleset shape. Compiled by the
// benchmark at start (cc -O2), run inside the namespaces with nsenter.
//
//   tcp-probe serve PORT
//     Listens on 0.0.0.0:PORT, prints "ready", accepts and closes forever.
//   tcp-probe connect WARMUP TIMEOUT_MS IP:PORT...
//     WARMUP untimed connects to the first target, then one connect per target, one after the
//     other. Each is timed with CLOCK_MONOTONIC from connect(2) to its return (the SYN out and the
//     SYN-ACK back: the handshake through the node's ruleset), then closed with a reset (SO_LINGER
//     0) outside the timed part, so no TIME_WAIT piles up. Prints one line: the time of each
//     connect in nanoseconds, or E<errno> for a connect that failed.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int serve(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 4096) < 0) {
    perror("tcp-probe serve");
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c >= 0) close(c);
  }
}

static int parse_target(const char *text, struct sockaddr_in *out) {
  char host[64];
  const char *colon = strrchr(text, ':');
  if (!colon || (size_t)(colon - text) >= sizeof host) return -1;
  memcpy(host, text, (size_t)(colon - text));
  host[colon - text] = 0;
  memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons((unsigned short)atoi(colon + 1));
  return inet_pton(AF_INET, host, &out->sin_addr) == 1 ? 0 : -1;
}

/** One connect: its duration in ns, or -errno. */
static long long connect_once(const struct sockaddr_in *to, const struct timeval *timeout) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return -errno;
  // A blocking connect gives up after SO_SNDTIMEO.
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, timeout, sizeof *timeout);
  long long t0 = now_ns();
  int r = connect(s, (const struct sockaddr *)to, sizeof *to);
  long long t1 = now_ns();
  int err = errno;
  struct linger reset = {.l_onoff = 1, .l_linger = 0};
  setsockopt(s, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(s);
  return r == 0 ? t1 - t0 : -err;
}

static int connect_all(int argc, char **argv) {
  int warmup = atoi(argv[0]);
  int timeout_ms = atoi(argv[1]);
  int n = argc - 2;
  struct timeval timeout = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
  struct sockaddr_in *targets = calloc((size_t)n, sizeof *targets);
  long long *times = calloc((size_t)n, sizeof *times);
  if (n < 1 || !targets || !times) {
    fprintf(stderr, "tcp-probe connect: no targets\n");
    return 2;
  }
  for (int i = 0; i < n; i++) {
    if (parse_target(argv[i + 2], &targets[i]) < 0) {
      fprintf(stderr, "tcp-probe connect: bad target %s (want IPv4:port)\n", argv[i + 2]);
      return 2;
    }
  }
  for (int i = 0; i < warmup; i++) connect_once(&targets[0], &timeout);
  for (int i = 0; i < n; i++) times[i] = connect_once(&targets[i], &timeout);
  for (int i = 0; i < n; i++) {
    if (times[i] >= 0) printf(i ? " %lld" : "%lld", times[i]);
    else printf(i ? " E%lld" : "E%lld", -times[i]);
  }
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "serve") == 0) return serve(atoi(argv[2]));
  if (argc >= 5 && strcmp(argv[1], "connect") == 0) return connect_all(argc - 2, argv + 2);
  fprintf(stderr, "usage: tcp-probe serve PORT | tcp-probe connect WARMUP TIMEOUT_MS IP:PORT...\n");
  return 2;
}
