/* One prepared case in a loop, for a profiler (`harness profile`, used by
 * `sslperf profile`).
 *
 * Only sslperf_profiled_loop is meant to be profiled: callgrind is started
 * with --toggle-collect=sslperf_profiled_loop, and perf with its events
 * disabled (-D -1 --control fifo:CTL,ACK), which this file enables around the
 * loop when SSLPERF_PERF_CTL="CTL,ACK" names perf's control fifos. So setup
 * (keys, contexts, the checked first operation) stays out of the profile. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#if defined(__GNUC__) && !defined(__clang__)
#define SP_KEEP_NAME __attribute__((noinline, noipa))   /* no clone with another name */
#else
#define SP_KEEP_NAME __attribute__((noinline))
#endif

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Tell perf to enable or disable its events and wait (up to 10 s) for the
 * ack, so no sample of the loop is lost and none of the setup is kept.
 * Returns 1 when perf acknowledged. */
static int perf_control(const char *command)
{
    const char *spec = getenv("SSLPERF_PERF_CTL");
    char ctl_path[512], ack[8];
    const char *comma = spec ? strchr(spec, ',') : NULL;
    if (!comma || (size_t)(comma - spec) >= sizeof(ctl_path))
        return 0;
    memcpy(ctl_path, spec, (size_t)(comma - spec));
    ctl_path[comma - spec] = '\0';
    /* Non-blocking: with no perf at the other end, fail instead of hanging. */
    int ctl = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    int ackfd = open(comma + 1, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int ok = ctl >= 0 && ackfd >= 0 && write(ctl, command, strlen(command)) == (ssize_t)strlen(command);
    if (ok) {
        struct pollfd p = {.fd = ackfd, .events = POLLIN};
        ok = poll(&p, 1, 10000) == 1 && read(ackfd, ack, sizeof(ack)) > 0 && strncmp(ack, "ack", 3) == 0;
    }
    if (ctl >= 0)
        close(ctl);
    if (ackfd >= 0)
        close(ackfd);
    return ok;
}

/* Exactly `iters` operations when iters > 0; otherwise as many as fit in
 * `seconds`, in batches that grow to ~10 ms so the clock is rarely read. */
SP_KEEP_NAME int sslperf_profiled_loop(bench_case *c, uint64_t iters, double seconds, uint64_t *done)
{
    *done = 0;
    if (iters > 0) {
        int ok = c->run(c->state, iters);
        *done = ok ? iters : 0;
        return ok;
    }
    uint64_t start = now_ns(CLOCK_MONOTONIC), limit = (uint64_t)(seconds * 1e9), batch = 1;
    for (;;) {
        uint64_t t0 = now_ns(CLOCK_MONOTONIC);
        if (!c->run(c->state, batch))
            return 0;
        *done += batch;
        uint64_t t1 = now_ns(CLOCK_MONOTONIC);
        if (t1 - start >= limit)
            return 1;
        if (t1 - t0 < 10000000ull && batch < (1ull << 30))
            batch *= 2;
    }
}

int profile_case(bench_case *c, uint64_t iters, double seconds)
{
    uint64_t done = 0;
    int perf_on = perf_control("enable\n");
    uint64_t w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    int ok = sslperf_profiled_loop(c, iters, seconds, &done);
    uint64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = now_ns(CLOCK_MONOTONIC) - w0;
    int perf_off = perf_control("disable\n");
    printf("{\"type\":\"%s\",\"case\":", ok ? "profiled" : "error");
    json_string(c->id);
    printf(",\"ops\":%llu,\"wall_ns\":%llu,\"cpu_ns\":%llu,\"perf_control\":%s", (unsigned long long)done,
           (unsigned long long)wall, (unsigned long long)cpu, perf_on && perf_off ? "true" : "false");
    if (!ok) {
        printf(",\"reason\":");
        json_string("an operation failed in the profiled loop");
    }
    printf("}\n");
    fflush(stdout);
    return ok;
}
