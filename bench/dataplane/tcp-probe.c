// The two ends of the data-plane benchmark (npm run bench:dataplane), in C so that the client's own
// cost per connect is a few microseconds and the same for every ruleset shape. Compiled by the
// benchmark at start (cc -O2), run inside the namespaces with nsenter.
//
//   tcp-probe serve PORT
//     Listens on 0.0.0.0:PORT, prints "ready", accepts and closes forever.
//   tcp-probe connect WARMUP TIMEOUT_MS [NETNS=]IP:PORT...
//     One connect per target, one after the other. A target with NETNS (a path such as
//     /run/netns/NAME) is dialled from inside that network namespace: the probe setns(2)es into it
//     before making the socket, outside the timed part. So one process can alternate connect by
//     connect between the clients of several hosts, and every host sees the machine's moment alike.
//     First, WARMUP untimed connects to the first target of each namespace. Each connect is timed
//     with CLOCK_MONOTONIC from connect(2) to its return (the SYN out and the SYN-ACK back: the
//     handshake through the node's ruleset), then closed with a reset (SO_LINGER 0) outside the
//     timed part, so no TIME_WAIT piles up. Prints one line: the time of each connect in
//     nanoseconds, or E<errno> for a connect that failed.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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

#define MAX_NETNS 64

/** The namespaces the targets name: path -> open fd (-1 for "where the probe started"). */
static const char *ns_paths[MAX_NETNS];
static int ns_fds[MAX_NETNS];
static int ns_count;
static int ns_current = -1;

/** The index of a target's namespace (opened on first sight), or -1 without one; -2 on error. */
static int netns_of(const char *path) {
  if (!path) return -1;
  for (int i = 0; i < ns_count; i++)
    if (strcmp(ns_paths[i], path) == 0) return i;
  if (ns_count == MAX_NETNS) {
    fprintf(stderr, "tcp-probe connect: more than %d namespaces\n", MAX_NETNS);
    return -2;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "tcp-probe connect: %s: %s\n", path, strerror(errno));
    return -2;
  }
  ns_paths[ns_count] = path;
  ns_fds[ns_count] = fd;
  return ns_count++;
}

/** Enters namespace i (a socket belongs to the namespace it is made in); no-op for -1 or the current one. */
static int enter(int i) {
  if (i < 0 || i == ns_current) return 0;
  if (setns(ns_fds[i], CLONE_NEWNET) < 0) {
    fprintf(stderr, "tcp-probe connect: setns %s: %s\n", ns_paths[i], strerror(errno));
    return -1;
  }
  ns_current = i;
  return 0;
}

static int connect_all(int argc, char **argv) {
  int warmup = atoi(argv[0]);
  int timeout_ms = atoi(argv[1]);
  int n = argc - 2;
  struct timeval timeout = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
  struct sockaddr_in *targets = calloc((size_t)n, sizeof *targets);
  int *netns = calloc((size_t)n, sizeof *netns);
  long long *times = calloc((size_t)n, sizeof *times);
  if (n < 1 || !targets || !netns || !times) {
    fprintf(stderr, "tcp-probe connect: no targets\n");
    return 2;
  }
  for (int i = 0; i < n; i++) {
    char *text = argv[i + 2];
    char *eq = strchr(text, '=');
    if (eq) *eq = 0;
    netns[i] = netns_of(eq ? text : NULL);
    if (netns[i] == -2) return 2;
    if (parse_target(eq ? eq + 1 : text, &targets[i]) < 0) {
      fprintf(stderr, "tcp-probe connect: bad target %s (want [NETNS=]IPv4:port)\n", eq ? eq + 1 : text);
      return 2;
    }
  }
  // Warm-up: the first target of every namespace (of the only one, without any).
  int warmed[MAX_NETNS + 1] = {0};
  for (int i = 0; i < n; i++) {
    if (warmed[netns[i] + 1]++) continue;
    if (enter(netns[i]) < 0) return 1;
    for (int w = 0; w < warmup; w++) connect_once(&targets[i], &timeout);
  }
  for (int i = 0; i < n; i++) {
    if (enter(netns[i]) < 0) return 1;
    times[i] = connect_once(&targets[i], &timeout);
  }
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
  fprintf(stderr, "usage: tcp-probe serve PORT | tcp-probe connect WARMUP TIMEOUT_MS [NETNS=]IP:PORT...\n");
  return 2;
}
