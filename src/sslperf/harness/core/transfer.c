/* Bulk transfer in memory, the part no library's API is in (see transfer.h).
 *
 * One operation is one write of SIZE bytes and the reads that take them in,
 * so the rate is the application's throughput with every copy a TLS stack
 * makes in memory (into records, through the transport, out to the reader's
 * buffer). Each write is read at once, as an application that answers what
 * it reads would do. The writer's and the reader's time are kept apart
 * (reported as client = send and server = receive): every SPLIT_EVERY-th
 * operation is timed side by side, and the batches' whole time is divided
 * between the sides in that proportion (reading a clock three times per
 * write would cost 4% of a 1 KiB one, and more of a 16-byte one, whose timed
 * operations would then overstate both sides). The monotonic clock serves:
 * one thread that never waits, so each side's wall time is its CPU time.
 * Before timing, one write is checked: version and suite as asked, and the
 * reader gets exactly the bytes written. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "transfer.h"

#define SPLIT_EVERY 16                 /* operations per one whose two sides are timed */
#define MAX_TRANSFER (16u * 1024 * 1024)
#define CALL_MAX 0x40000000            /* bytes one library call is given (their lengths are ints) */

struct transfer_state {
    const sp_transfer_ops *ops;
    void *pair;
    unsigned char *out, *in;
    size_t size;
    sp_sampled_split split;            /* a: send, b: receive */
};

/* The client's write of `len` bytes and the server's reads of them, in as many calls as they take. */
static int send_all(struct transfer_state *s, const unsigned char *buf, size_t len)
{
    while (len > 0) {
        int n = s->ops->write(s->pair, buf, len > CALL_MAX ? CALL_MAX : (int)len);
        if (n <= 0)
            return 0;
        buf += n;
        len -= (size_t)n;
    }
    return 1;
}

static int receive_all(struct transfer_state *s, unsigned char *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        int n = s->ops->read(s->pair, buf + got, len - got > CALL_MAX ? CALL_MAX : (int)(len - got));
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

/* Every SPLIT_EVERY-th write and its reads timed apart; the rest untimed, so clock reads cost them nothing. */
static int run_transfer(void *p, uint64_t iters)
{
    struct transfer_state *s = p;
    uint64_t start = sp_now_ns(SP_WALL);
    for (uint64_t i = 0; i < iters; i++) {
        if ((s->split.ops + i) % SPLIT_EVERY) {
            if (!send_all(s, s->out, s->size) || !receive_all(s, s->in, s->size))
                return 0;
            continue;
        }
        uint64_t t0 = sp_now_ns(SP_WALL);
        if (!send_all(s, s->out, s->size))
            return 0;
        uint64_t t1 = sp_now_ns(SP_WALL);
        if (!receive_all(s, s->in, s->size))
            return 0;
        s->split.a_ns += t1 - t0;
        s->split.b_ns += sp_now_ns(SP_WALL) - t1;
    }
    s->split.ops += iters;
    s->split.batch_ns += sp_now_ns(SP_WALL) - start;
    return 1;
}

static void split_times(void *p, uint64_t *send, uint64_t *receive)
{
    struct transfer_state *s = p;
    sp_split_sampled(&s->split, send, receive);
}

static void release_transfer(void *p)
{
    struct transfer_state *s = p;
    if (s->pair) {
        s->ops->release(s->pair);
        free(s->pair);
    }
    free(s->out);
    free(s->in);
    free(s);
}

/* Version and suite as asked, and the reader gets exactly what was written. */
static prep_status check_first(struct transfer_state *s, prep_result *res, char *checked, size_t len)
{
    char seen[REASON_MAX] = "";
    prep_status status = s->ops->check(s->pair, res, seen, sizeof(seen));
    if (status != PREP_OK)
        return status;
    fill_pattern(s->out, s->size, 7);
    memset(s->in, 0, s->size);
    if (!send_all(s, s->out, s->size))
        return prep_error(res, "%s of %zu bytes failed", s->ops->write_call, s->size);
    if (!receive_all(s, s->in, s->size))
        return prep_error(res, "the server did not read back %zu bytes", s->size);
    if (getenv("SSLPERF_TRANSFER_FLIP_A_BYTE"))     /* lets a test see that the comparison catches it */
        s->in[s->size / 2] ^= 1;
    if (memcmp(s->in, s->out, s->size) != 0)
        return prep_error(res, "the reader got other bytes than the writer wrote");
    snprintf(checked, len, "%.200s, %zu bytes received as written", seen, s->size);
    return PREP_OK;
}

prep_status sp_prepare_transfer(const case_name *name, const sp_transfer_ops *ops, bench_case *out, prep_result *res)
{
    struct transfer_state *s = calloc(1, sizeof(*s));
    prep_status status = PREP_OK;
    if (!s)
        return prep_error(res, "out of memory");
    s->ops = ops;
    if (name->n != 5)
        status = prep_unknown(res, "transfer cases are tls/transfer/PROTO/SUITE/SIZE");
    else if (!parse_size(name->part[4], &s->size) || s->size > MAX_TRANSFER)
        status = prep_unknown(res, "the write size must be 1 to %u bytes, not \"%s\"", MAX_TRANSFER, name->part[4]);
    else if (!(s->pair = calloc(1, ops->pair_size)))
        status = prep_error(res, "out of memory");
    else
        status = ops->connect(s->pair, name->part[2], name->part[3], s->size, res);
    if (status == PREP_OK && (!(s->out = malloc(s->size)) || !(s->in = malloc(s->size))))
        status = prep_error(res, "out of memory for %zu-byte buffers", s->size);
    if (status == PREP_OK)
        status = check_first(s, res, out->checked, sizeof(out->checked));
    if (status == PREP_OK && ops->negotiated)
        ops->negotiated(s->pair, &out->negotiated);
    if (sp_take(status, out, s, release_transfer, UNIT_BYTES, s->size) != PREP_OK)
        return status;
    out->run = run_transfer;
    out->split = split_times;
    snprintf(out->note, sizeof(out->note), "client writes, server reads; copies in memory included");
    return PREP_OK;
}
