/* Bulk transfer through rustls-ffi in memory, as openssl/transfer.c measures
 * it: after one handshake the client writes SIZE bytes and the server reads
 * them all, every copy a TLS stack makes included (plaintext into records,
 * records through the pipe, out into the reader's buffer).
 *
 *   tls/transfer/PROTO/SUITE/SIZE
 *
 * The writer's and the reader's time are kept apart the same way: every
 * SPLIT_EVERY-th operation is timed side by side and the batches' whole time
 * is divided in that proportion (client = send, server = receive). Before
 * timing, one write is checked: version and suite as asked, and the reader
 * gets exactly the bytes written. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rustls_cases.h"

#define SPLIT_EVERY 16
#define MAX_TRANSFER (16u * 1024 * 1024)

struct transfer_state {
    rtls_config cfg;
    const struct rustls_server_config *server_config;
    const struct rustls_client_config *client_config;
    rtls_pair pair;
    unsigned char *out, *in;
    size_t size;
    sp_sampled_split split;      /* a: send, b: receive */
};

/* The client's write of `size` bytes, all of it turned into records in the pipe. */
static int send_all(struct transfer_state *s)
{
    size_t done = 0;
    int moved = 0;
    while (done < s->size) {
        size_t n = 0;
        if (rustls_connection_write(s->pair.client, s->out + done, s->size - done, &n) != RUSTLS_RESULT_OK)
            return 0;
        done += n;
        if (!rtls_flush(s->pair.client, &s->pair.to_server, &moved) || (n == 0 && !moved))
            return 0;
    }
    return 1;
}

/* The server takes the records in and reads `size` bytes of plaintext out. */
static int receive_all(struct transfer_state *s)
{
    rtls_reader reader = {&s->pair.to_server, 0};
    size_t got = 0;
    while (got < s->size) {
        size_t n = 0;
        unsigned int rc = rustls_connection_read(s->pair.server, s->in + got, s->size - got, &n);
        if (rc == RUSTLS_RESULT_OK && n > 0) {
            got += n;
            continue;
        }
        if ((rc != RUSTLS_RESULT_OK && rc != RUSTLS_RESULT_PLAINTEXT_EMPTY) || reader.off >= reader.pipe->len)
            return 0;
        if (rustls_connection_read_tls(s->pair.server, rtls_pipe_read, &reader, &n) != 0
            || rustls_connection_process_new_packets(s->pair.server) != RUSTLS_RESULT_OK)
            return 0;
    }
    rtls_pipe *pipe = reader.pipe;      /* records of a later write stay for it */
    memmove(pipe->data, pipe->data + reader.off, pipe->len - reader.off);
    pipe->len -= reader.off;
    return 1;
}

/* Every SPLIT_EVERY-th write and its reads timed apart; the rest untimed, so clock reads cost them nothing. */
static int run_transfer(void *p, uint64_t iters)
{
    struct transfer_state *s = p;
    uint64_t start = sp_now_ns(SP_WALL);
    for (uint64_t i = 0; i < iters; i++) {
        if ((s->split.ops + i) % SPLIT_EVERY) {
            if (!send_all(s) || !receive_all(s))
                return 0;
            continue;
        }
        uint64_t t0 = sp_now_ns(SP_WALL);
        if (!send_all(s))
            return 0;
        uint64_t t1 = sp_now_ns(SP_WALL);
        if (!receive_all(s))
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
    if (s->pair.client)
        rtls_close(&s->pair);
    rtls_pipes_free(&s->pair);
    rustls_client_config_free(s->client_config);
    rustls_server_config_free(s->server_config);
    free(s->out);
    free(s->in);
    free(s);
}

static prep_status check_first(struct transfer_state *s, prep_result *res, char *checked, size_t len)
{
    char problem[200], seen[REASON_MAX];
    rtls_check(&s->cfg, &s->pair, 0, problem, sizeof(problem), seen, sizeof(seen));
    if (problem[0])
        return prep_error(res, "%s", problem);
    fill_pattern(s->out, s->size, 7);
    memset(s->in, 0, s->size);
    if (!send_all(s))
        return prep_error(res, "rustls_connection_write of %zu bytes failed", s->size);
    if (!receive_all(s))
        return prep_error(res, "the server did not read back %zu bytes", s->size);
    if (getenv("SSLPERF_TRANSFER_FLIP_A_BYTE"))     /* lets a test see that the comparison catches it */
        s->in[s->size / 2] ^= 1;
    if (memcmp(s->in, s->out, s->size) != 0)
        return prep_error(res, "the reader got other bytes than the writer wrote");
    snprintf(checked, len, "%.*s, %zu bytes received as written", (int)(strlen(seen) < 200 ? strlen(seen) : 200), seen,
             s->size);
    return PREP_OK;
}

prep_status prepare_rustls_transfer(const case_name *name, bench_case *out, prep_result *res)
{
    struct transfer_state *s = calloc(1, sizeof(*s));
    prep_status status;
    if (!s)
        return prep_error(res, "out of memory");
    if (name->n != 5)
        status = prep_unknown(res, "transfer cases are tls/transfer/PROTO/SUITE/SIZE");
    else if (!parse_size(name->part[4], &s->size) || s->size > MAX_TRANSFER)
        status = prep_unknown(res, "the write size must be 1 to %u bytes, not \"%s\"", MAX_TRANSFER, name->part[4]);
    else
        status = rtls_transfer_config(name->part[2], name->part[3], &s->cfg, res);
    if (status == PREP_OK)
        status = rtls_make_configs(&s->cfg, &s->server_config, &s->client_config, res);
    if (status == PREP_OK) {
        s->out = malloc(s->size);
        s->in = malloc(s->size);
        if (!s->out || !s->in)
            status = prep_error(res, "out of memory for %zu-byte buffers", s->size);
        else if (!rtls_connect(&s->pair, s->client_config, s->server_config, res) || !rtls_exchange(&s->pair, 16, res))
            status = res->status;
    }
    if (status == PREP_OK)
        status = check_first(s, res, out->checked, sizeof(out->checked));
    if (sp_take(status, out, s, release_transfer, UNIT_BYTES, s->size) != PREP_OK)
        return status;
    out->run = run_transfer;
    out->split = split_times;
    snprintf(out->note, sizeof(out->note), "client writes, server reads; copies in memory included");
    return PREP_OK;
}
