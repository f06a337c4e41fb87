/* The in-memory transport of a rustls client and server in one process: each direction's records in a pipe,
 * moved by rustls-ffi's read and write callbacks, and the exchanges of a handshake; a watched pair's records are
 * read on their way (watch.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rustls_cases.h"

rustls_io_result rtls_pipe_write(void *userdata, const uint8_t *buf, size_t n, size_t *out_n)
{
    rtls_pipe *pipe = userdata;
    if (pipe->len + n > pipe->cap) {
        size_t cap = pipe->cap ? pipe->cap : 16384;
        while (cap < pipe->len + n)
            cap *= 2;
        uint8_t *grown = realloc(pipe->data, cap);
        if (!grown)
            return 12;   /* ENOMEM */
        pipe->data = grown;
        pipe->cap = cap;
    }
    memcpy(pipe->data + pipe->len, buf, n);
    pipe->len += n;
    *out_n = n;
    return 0;
}

rustls_io_result rtls_pipe_read(void *userdata, uint8_t *buf, size_t n, size_t *out_n)
{
    rtls_reader *r = userdata;
    size_t left = r->pipe->len - r->off;
    *out_n = n < left ? n : left;
    memcpy(buf, r->pipe->data + r->off, *out_n);
    r->off += *out_n;
    return 0;
}

int rtls_flush(struct rustls_connection *conn, rtls_pipe *pipe, int *moved)
{
    while (rustls_connection_wants_write(conn)) {
        size_t n = 0;
        if (rustls_connection_write_tls(conn, rtls_pipe_write, pipe, &n) != 0)
            return 0;
        if (n == 0)
            break;
        *moved = 1;
    }
    return 1;
}

/* Everything in `pipe`, read and processed by `conn`. */
static unsigned int feed(struct rustls_connection *conn, rtls_pipe *pipe)
{
    rtls_reader reader = {pipe, 0};
    while (reader.off < pipe->len) {
        size_t n = 0;
        if (rustls_connection_read_tls(conn, rtls_pipe_read, &reader, &n) != 0 || n == 0)
            return RUSTLS_RESULT_IO;
        unsigned int rc = rustls_connection_process_new_packets(conn);
        if (rc != RUSTLS_RESULT_OK)
            return rc;
    }
    pipe->len = 0;
    return RUSTLS_RESULT_OK;
}

int rtls_connect(rtls_pair *pair, const struct rustls_client_config *client, const struct rustls_server_config *server,
                 prep_result *res)
{
    uint64_t t0 = rtls_now(pair);
    unsigned int rc = rustls_client_connection_new(client, "localhost", &pair->client);
    uint64_t t1 = rtls_now(pair);
    pair->client_ns += t1 - t0;
    if (rc == RUSTLS_RESULT_OK)
        rc = rustls_server_connection_new(server, &pair->server);
    pair->server_ns += rtls_now(pair) - t1;
    pair->to_server.len = pair->to_client.len = 0;
    if (rc != RUSTLS_RESULT_OK) {
        rtls_fail(res, rc, "cannot make a connection");
        return 0;
    }
    return 1;
}

unsigned int rtls_step(rtls_pair *pair, int *moved)
{
    unsigned int rc = RUSTLS_RESULT_OK;
    uint64_t t0 = rtls_now(pair);
    int ok = rtls_flush(pair->client, &pair->to_server, moved);
    uint64_t t1 = rtls_now(pair);
    if (ok && pair->watch)
        rtls_watch_bytes(pair->watch, 1, pair->to_server.data, pair->to_server.len);
    if (ok && pair->to_server.len)
        rc = feed(pair->server, &pair->to_server);
    ok = ok && rc == RUSTLS_RESULT_OK && rtls_flush(pair->server, &pair->to_client, moved);
    uint64_t t2 = rtls_now(pair);
    if (ok && pair->watch)
        rtls_watch_bytes(pair->watch, 0, pair->to_client.data, pair->to_client.len);
    if (ok && pair->to_client.len)
        rc = feed(pair->client, &pair->to_client);
    uint64_t t3 = rtls_now(pair);
    pair->client_ns += (t1 - t0) + (t3 - t2);
    pair->server_ns += t2 - t1;
    return !ok && rc == RUSTLS_RESULT_OK ? RUSTLS_RESULT_IO : rc;
}

int rtls_exchange(rtls_pair *pair, int rounds, prep_result *res)
{
    for (int r = 0; r < rounds; r++) {
        int moved = 0;
        unsigned int rc = rtls_step(pair, &moved);
        if (rc != RUSTLS_RESULT_OK) {
            if (res)
                rtls_fail(res, rc, "the handshake failed");
            return 0;
        }
        if (!moved)
            return !rustls_connection_is_handshaking(pair->client) && !rustls_connection_is_handshaking(pair->server);
    }
    if (res)
        prep_error(res, "the handshake did not finish in %d exchanges", rounds);
    return 0;
}

void rtls_close(rtls_pair *pair)
{
    uint64_t t0 = rtls_now(pair);
    rustls_connection_free(pair->client);
    uint64_t t1 = rtls_now(pair);
    rustls_connection_free(pair->server);
    pair->server_ns += rtls_now(pair) - t1;
    pair->client_ns += t1 - t0;
    pair->client = pair->server = NULL;
}

void rtls_pipes_free(rtls_pair *pair)
{
    free(pair->to_server.data);
    free(pair->to_client.data);
    memset(&pair->to_server, 0, sizeof(pair->to_server));
    memset(&pair->to_client, 0, sizeof(pair->to_client));
}
