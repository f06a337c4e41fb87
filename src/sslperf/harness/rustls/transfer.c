/* Bulk transfer through rustls-ffi in memory (core/transfer.c times it): after one handshake the client writes
 * SIZE bytes into records in the pipe, and the server takes them in and reads SIZE bytes of plaintext out.
 *
 *   tls/transfer/PROTO/SUITE/SIZE */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rustls_cases.h"
#include "transfer.h"

struct rustls_transfer {
    rtls_config cfg;
    const struct rustls_server_config *server_config;
    const struct rustls_client_config *client_config;
    rtls_pair pair;
    rtls_reader reader;          /* the server's place in the pipe of the client's records */
    sp_negotiated negotiated;    /* what the handshake negotiated (watch.c) */
};

/* Plaintext into the client, and the records it makes into the pipe. */
static int write_some(void *p, const unsigned char *buf, int len)
{
    rtls_pair *pair = &((struct rustls_transfer *)p)->pair;
    for (;;) {
        size_t n = 0;
        int moved = 0;
        if (rustls_connection_write(pair->client, buf, (size_t)len, &n) != RUSTLS_RESULT_OK
            || !rtls_flush(pair->client, &pair->to_server, &moved))
            return -1;
        if (n > 0)
            return (int)n;
        if (!moved)
            return -1;           /* nothing taken and nothing sent: it would never move */
    }
}

/* The server's plaintext, taking in the next records from the pipe while it has none. */
static int read_some(void *p, unsigned char *buf, int len)
{
    struct rustls_transfer *s = p;
    rtls_reader *reader = &s->reader;
    for (;;) {
        size_t n = 0;
        unsigned int rc = rustls_connection_read(s->pair.server, buf, (size_t)len, &n);
        if (rc == RUSTLS_RESULT_OK && n > 0)
            return (int)n;
        if ((rc != RUSTLS_RESULT_OK && rc != RUSTLS_RESULT_PLAINTEXT_EMPTY) || reader->off >= reader->pipe->len
            || rustls_connection_read_tls(s->pair.server, rtls_pipe_read, reader, &n) != 0
            || rustls_connection_process_new_packets(s->pair.server) != RUSTLS_RESULT_OK)
            return -1;
        if (reader->off == reader->pipe->len)
            reader->off = reader->pipe->len = 0;     /* all taken in: the next write's records start the pipe */
    }
}

static void release_pair(void *p)
{
    struct rustls_transfer *s = p;
    if (s->pair.client)
        rtls_close(&s->pair);
    rtls_pipes_free(&s->pair);
    rustls_client_config_free(s->client_config);
    rustls_server_config_free(s->server_config);
}

static prep_status connect_pair(void *p, const char *proto, const char *suite, size_t size, prep_result *res)
{
    (void)size;     /* the pipes grow to a write's records */
    struct rustls_transfer *s = p;
    prep_status status = rtls_transfer_config(proto, suite, &s->cfg, res);
    if (status == PREP_OK)
        status = rtls_make_configs(&s->cfg, &s->server_config, &s->client_config, res);
    rtls_watch watch;
    rtls_watch_start(&watch, &s->negotiated);
    s->pair.watch = &watch;
    if (status == PREP_OK
        && !(rtls_connect(&s->pair, s->client_config, s->server_config, res) && rtls_exchange(&s->pair, 16, res)))
        status = res->status;
    s->pair.watch = NULL;
    if (status == PREP_OK)
        rtls_watch_end(&watch, s->pair.client);
    s->reader = (rtls_reader){&s->pair.to_server, 0};
    return status;
}

static prep_status check(void *p, prep_result *res, char *seen, size_t seen_len)
{
    struct rustls_transfer *s = p;
    char problem[200];
    rtls_check(&s->cfg, &s->pair, 0, problem, sizeof(problem), seen, seen_len);
    if (strncmp(problem, "group:", 6) == 0) {     /* transfers are over X25519, which a pq-first build does not use */
        rtls_group_na(&s->cfg, problem + 6, res);
        return PREP_NA;
    }
    return problem[0] ? prep_error(res, "%s", problem) : PREP_OK;
}

static void negotiated(void *p, sp_negotiated *n)
{
    *n = ((struct rustls_transfer *)p)->negotiated;
}

static const sp_transfer_ops RUSTLS_TRANSFER = {
    "rustls_connection_write", sizeof(struct rustls_transfer), connect_pair, check, write_some, read_some,
    release_pair, negotiated,
};

prep_status prepare_rustls_transfer(const case_name *name, bench_case *out, prep_result *res)
{
    return sp_prepare_transfer(name, &RUSTLS_TRANSFER, out, res);
}
