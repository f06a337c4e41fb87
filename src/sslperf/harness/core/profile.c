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
#include <unistd.h>

#include "backend.h"
#include "harness.h"

#if defined(__GNUC__) && !defined(__clang__)
#define SP_KEEP_NAME __attribute__((noinline, noipa))   /* no clone with another name */
#else
#define SP_KEEP_NAME __attribute__((noinline))
#endif

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

/* The profiled function: the batch and nothing else (the clock is read
 * around it, calibration happened before it). */
SP_KEEP_NAME int sslperf_profiled_loop(void *p, uint64_t iters)
{
    bench_case *c = p;
    int ok = c->run(c->state, iters);
    /* Not a tail call: this frame must stay on the stack under the batch, or
     * perf's call graphs lose it and callgrind cannot toggle on its exit. */
    __asm__ __volatile__("" : : : "memory");
    return ok;
}

/* Exactly `iters` operations when iters > 0; otherwise as many as take
 * about `seconds`, counted before perf is switched on. With `differential`,
 * the loop runs twice, `iters` then 2 x `iters` operations: a counter that
 * keeps each call apart (callgrind --dump-after) subtracts the first from the
 * second, and the loop's fixed cost, which would otherwise be shared by more
 * or fewer operations, cancels. */
int profile_case(bench_case *c, uint64_t iters, double seconds, int differential)
{
    uint64_t target = (uint64_t)(seconds * 1e9), wall = 0, cpu = 0, wall2 = 0, cpu2 = 0;
    int calibrated = iters > 0 || sp_calibrate(c->run, c->state, target, SP_SHORT_PROBE(target), &iters);
    int perf_on = calibrated && perf_control("enable\n");
    int ok = calibrated && sp_timed_batch(sslperf_profiled_loop, c, iters, &wall, &cpu);
    if (ok && differential)
        ok = sp_timed_batch(sslperf_profiled_loop, c, 2 * iters, &wall2, &cpu2);
    int perf_off = calibrated && perf_control("disable\n");
    printf("{\"type\":\"%s\",\"case\":", ok ? "profiled" : "error");
    json_string(c->id);
    printf(",\"ops\":%llu,\"wall_ns\":%llu,\"cpu_ns\":%llu,\"perf_control\":%s", (unsigned long long)(ok ? iters : 0),
           (unsigned long long)wall, (unsigned long long)cpu, perf_on && perf_off ? "true" : "false");
    if (differential)
        printf(",\"second_ops\":%llu", (unsigned long long)(ok ? 2 * iters : 0));
    printf(",\"deterministic_rand\":");
    json_string(sp_deterministic_state());
    if (!ok) {
        printf(",\"reason\":");
        json_string(calibrated ? "an operation failed in the profiled loop" : "an operation failed during calibration");
    }
    printf("}\n");
    fflush(stdout);
    return ok;
}
