/* What the minimal loops share (bench/minimal_*_handshake.c and minimal_*_transfer.c, which
 * bench/handshake_overhead.py and transfer_overhead.py compile): the clock, read once per 16 operations as
 * the harness reads it, and the rate printed at the end. */
#ifndef MINIMAL_COMMON_H
#define MINIMAL_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    double start, limit, elapsed;      /* seconds */
    long count;                        /* operations begun */
} minimal_clock;

static double minimal_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A clock that runs for `ms` (the program's argument, in milliseconds). */
static minimal_clock minimal_start(const char *ms)
{
    return (minimal_clock){minimal_now(), atof(ms) / 1000.0, 0, 0};
}

/* Whether to begin another operation: the clock is read before every 16th, and the time is up there. */
static int minimal_running(minimal_clock *c)
{
    if (c->count % 16 == 0 && (c->elapsed = minimal_now() - c->start) >= c->limit)
        return 0;
    c->count++;
    return 1;
}

/* Prints the rate: `per_op` units (1, or the bytes of a write) per operation, per second. */
static int minimal_report(const minimal_clock *c, double per_op)
{
    printf("%.1f\n", (double)c->count * per_op / c->elapsed);
    return 0;
}

#endif
