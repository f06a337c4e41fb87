/* The CPU's own counters: user-space instructions and cycles of a prepared
 * case's loop, through perf_event_open (`harness hwcount`, used by
 * `--metric instructions` where the machine has a PMU).
 *
 * Like the callgrind count, the loop runs N then 2N operations and the
 * difference is reported, so the loop's fixed cost (and the counters' own
 * enable/disable) cancels. The counters exclude the kernel and the
 * hypervisor; they are nearly free, so the loop runs natively. Where the
 * kernel, a container or a VM without a virtual PMU refuses them, `info`
 * says why and sslperf counts with callgrind instead. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"

static int instructions_fd = -1, cycles_fd = -1;
static char refused[160];

static int open_counter(uint64_t config)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* 1 when both counters are open (opened on first use); else `refused` says why. */
static int counters_open(void)
{
    if (instructions_fd >= 0 && cycles_fd >= 0)
        return 1;
    if (refused[0])
        return 0;
    instructions_fd = open_counter(PERF_COUNT_HW_INSTRUCTIONS);
    if (instructions_fd < 0) {
        snprintf(refused, sizeof(refused), "perf_event_open(instructions) failed: %s", strerror(errno));
        return 0;
    }
    cycles_fd = open_counter(PERF_COUNT_HW_CPU_CYCLES);
    if (cycles_fd < 0) {
        snprintf(refused, sizeof(refused), "perf_event_open(cycles) failed: %s", strerror(errno));
        close(instructions_fd);
        instructions_fd = -1;
        return 0;
    }
    return 1;
}

/* For `info`: "instructions,cycles", or "none: WHY". */
const char *sp_counters_state(void)
{
    static char state[200];
    if (counters_open())
        return "instructions,cycles";
    snprintf(state, sizeof(state), "none: %s", refused);
    return state;
}

static int counted_batch(bench_case *c, uint64_t iters, uint64_t *instructions, uint64_t *cycles)
{
    ioctl(instructions_fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(cycles_fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(instructions_fd, PERF_EVENT_IOC_ENABLE, 0);
    ioctl(cycles_fd, PERF_EVENT_IOC_ENABLE, 0);
    int ok = c->run(c->state, iters);
    ioctl(cycles_fd, PERF_EVENT_IOC_DISABLE, 0);
    ioctl(instructions_fd, PERF_EVENT_IOC_DISABLE, 0);
    return ok && read(instructions_fd, instructions, sizeof(*instructions)) == sizeof(*instructions)
           && read(cycles_fd, cycles, sizeof(*cycles)) == sizeof(*cycles);
}

/* `iters` operations' instructions and cycles: the 2N batch less the N batch. */
int hwcount_case(bench_case *c, uint64_t iters)
{
    uint64_t i1 = 0, c1 = 0, i2 = 0, c2 = 0;
    const char *why = NULL;
    if (!counters_open())
        why = refused;
    else if (!counted_batch(c, iters, &i1, &c1) || !counted_batch(c, 2 * iters, &i2, &c2))
        why = "an operation failed in the counted loop, or a counter could not be read";
    else if (i2 < i1)
        why = "the counters went backwards (multiplexed with other events?)";
    printf("{\"type\":\"%s\",\"case\":", why ? "error" : "hwcounted");
    json_string(c->id);
    if (why) {
        printf(",\"reason\":");
        json_string(why);
    } else {
        printf(",\"ops\":%llu,\"instructions\":%llu,\"cycles\":%llu", (unsigned long long)iters,
               (unsigned long long)(i2 - i1), (unsigned long long)(c2 > c1 ? c2 - c1 : 0));
    }
    printf("}\n");
    fflush(stdout);
    return why == NULL;
}
