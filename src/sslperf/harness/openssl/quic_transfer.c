/* Bulk transfer on one QUIC stream over loopback UDP (OpenSSL 3.5+), the
 * QUIC counterpart of transfer_tcp.c:
 *
 *   harness quic-transfer-server DIR SUITE SIZE
 *       binds 127.0.0.1 only (ephemeral port), prints {"type":"listening",...};
 *       takes one connection and its first stream, reads until the stream
 *       ends, checks every byte against the writer's pattern, answers with
 *       the byte count on the same stream, and prints {"type":"received",...}.
 *   harness quic-transfer-client PORT CA_FILE SUITE SIZE MS
 *       connects (verifying the server; what it negotiates recorded through
 *       the handshake, quic_wire.c, the callback off before any data), checks
 *       QUIC and the suite, writes SIZE-byte writes on one bidirectional
 *       stream for MS milliseconds, ends the stream and waits for the
 *       server's count: the wall time runs until the reader has everything.
 *       Prints {"type":"sent",...} with the writes, wall and CPU time and
 *       "negotiated".
 *
 * Without a QUIC server in the library, both answer n/a. */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "loopback.h"
#include "quic_loopback.h"
#include "tls.h"

#include <openssl/ssl.h>

#if SP_OSSL_QUIC

#define MAX_WRITE (16u * 1024 * 1024)
#define STALL_MS 60000            /* a transfer that moves nothing for this long has failed */

static prep_status quic_transfer_config(const char *suite, tls_config *cfg, prep_result *res)
{
    memset(cfg, 0, sizeof(*cfg));
    prep_status status = tls_transfer_config("tls1.3", suite, cfg, res);
    cfg->quic = 1;
    return status;
}

/* The one connection, waited for without blocking the listener, for QUIC_IDLE_MS at most. */
static SSL *accept_one(SSL *listener, int fd)
{
    uint64_t deadline = sp_now_ns(SP_WALL) + (uint64_t)QUIC_IDLE_MS * 1000000;
    while (sp_now_ns(SP_WALL) < deadline) {
        SSL *conn = SSL_accept_connection(listener, SSL_ACCEPT_CONNECTION_NO_BLOCK);
        if (conn)
            return conn;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        poll(&pfd, 1, 20);
        SSL_handle_events(listener);
    }
    return NULL;
}

/* The stream's bytes, compared piece by piece with the writer's buffer repeated; the bytes read. */
static uint64_t read_checked(SSL *stream, size_t size, uint64_t *mismatched, int *ended)
{
    size_t cap = size < 65536 ? 65536 : size, got = 0;
    unsigned char *expected = malloc(size), *buf = malloc(cap);
    uint64_t received = 0;
    if (!expected || !buf) {
        free(expected);
        free(buf);
        return 0;
    }
    fill_pattern(expected, size, 7);
    while (SSL_read_ex(stream, buf, cap, &got)) {
        for (size_t at = 0; at < got;) {
            size_t offset = (size_t)((received + at) % size), n = size - offset;
            n = n < got - at ? n : got - at;
            *mismatched += memcmp(buf + at, expected + offset, n) != 0;
            at += n;
        }
        received += got;
    }
    *ended = SSL_get_error(stream, 0) == SSL_ERROR_ZERO_RETURN;
    free(expected);
    free(buf);
    return received;
}

int quic_transfer_server(int argc, char **argv)
{
    (void)argc;
    tls_config cfg;
    prep_result res = {0};
    SSL_CTX *ctx = NULL, *unused = NULL;
    char ca_file[600];
    size_t size = 0;
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    if (!parse_size(argv[2], &size) || size > MAX_WRITE)
        return json_refusal("error", "quic-transfer-server", "the write size must be 1 to 16777216 bytes");
    prep_status status = quic_transfer_config(argv[1], &cfg, &res);
    if (status == PREP_OK)
        status = tls_make_ctxs(&cfg, &ctx, &unused, ca_file, sizeof(ca_file), &res);
    SSL_CTX_free(unused);
    if (status != PREP_OK) {
        SSL_CTX_free(ctx);
        return json_refusal(res.status == PREP_NA ? "na" : "error", "quic-transfer-server", res.reason);
    }
    int fd = -1, ended = 0;
    SSL *listener = quic_listen(ctx, ca_file, &fd), *conn = listener ? accept_one(listener, fd) : NULL;
    SSL *stream = NULL;
    uint64_t received = 0, mismatched = 0, cpu0 = sp_now_ns(SP_PROCESS_CPU);
    if (conn && SSL_set_blocking_mode(conn, 1) && (stream = SSL_accept_stream(conn, 0)) != NULL) {
        received = read_checked(stream, size, &mismatched, &ended);
        char count[64];
        size_t written = 0;
        snprintf(count, sizeof(count), "%llu\n", (unsigned long long)received);
        SSL_write_ex2(stream, count, strlen(count), SSL_WRITE_FLAG_CONCLUDE, &written);
    }
    uint64_t cpu = sp_now_ns(SP_PROCESS_CPU) - cpu0;
    printf("{\"type\":\"received\",\"ok\":%s,\"bytes\":%llu,\"mismatched_pieces\":%llu,\"cpu_ns\":%llu}\n",
           ended ? "true" : "false", (unsigned long long)received, (unsigned long long)mismatched,
           (unsigned long long)cpu);
    fflush(stdout);
    if (conn)
        SSL_shutdown_ex(conn, SSL_SHUTDOWN_FLAG_WAIT_PEER, NULL, 0);    /* the count reaches the client */
    SSL_free(stream);
    SSL_free(conn);
    SSL_free(listener);
    SSL_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    unlink(ca_file);
    return ended ? 0 : 1;
}

/* Waits for the socket or the QUIC stack's next 5 ms, then lets the stack do what is due: 1, or 0 once nothing
 * has moved for STALL_MS since `progress` (`why` says what was being waited for). */
static int wait_a_little(SSL *ssl, int fd, uint64_t progress, const char *waiting, char *why, size_t why_len)
{
    if (sp_now_ns(SP_WALL) - progress > (uint64_t)STALL_MS * 1000000) {
        snprintf(why, why_len, "stalled: %s made no progress for %d s", waiting, STALL_MS / 1000);
        return 0;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    poll(&pfd, 1, 5);
    SSL_handle_events(ssl);
    return 1;
}

/* One SIZE-byte application write, in as many non-blocking pieces as the stream's buffer and flow control allow:
 * 1, or 0 with `why`. */
static int write_all(SSL *ssl, int fd, const unsigned char *out, size_t size, char *why, size_t why_len)
{
    uint64_t progress = sp_now_ns(SP_WALL);
    for (size_t done = 0, n = 0; done < size;) {
        if (SSL_write_ex(ssl, out + done, size - done, &n)) {
            done += n;
            progress = sp_now_ns(SP_WALL);
        } else if (SSL_get_error(ssl, 0) != SSL_ERROR_WANT_WRITE && SSL_get_error(ssl, 0) != SSL_ERROR_WANT_READ) {
            snprintf(why, why_len, "a write failed");
            return 0;
        } else if (!wait_a_little(ssl, fd, progress, "a write", why, why_len)) {
            return 0;
        }
    }
    return 1;
}

/* The server's count of what it read, waited for without blocking: 1, or 0 with `why`. */
static int read_count(SSL *ssl, int fd, char *count, size_t cap, size_t *got, char *why, size_t why_len)
{
    uint64_t since = sp_now_ns(SP_WALL);
    while (!SSL_read_ex(ssl, count, cap, got)) {
        if (SSL_get_error(ssl, 0) != SSL_ERROR_WANT_READ) {
            snprintf(why, why_len, "the server's count did not arrive: the stream failed");
            return 0;
        }
        if (!wait_a_little(ssl, fd, since, "waiting for the server's count", why, why_len))
            return 0;
    }
    return 1;
}

int quic_transfer_client(int argc, char **argv)
{
    (void)argc;
    int port = atoi(argv[0]), ms = atoi(argv[4]), fd = -1;
    size_t size = 0;
    tls_config cfg;
    prep_result res = {0};
    char why[REASON_MAX] = "", checked[REASON_MAX] = "";
    sp_negotiated negotiated = {0};
    if (!parse_size(argv[3], &size) || size > MAX_WRITE || ms < 1)
        return json_refusal("error", "quic-transfer-client", "bad size or duration");
    if (quic_transfer_config(argv[2], &cfg, &res) != PREP_OK)
        return json_refusal(res.status == PREP_NA ? "na" : "error", "quic-transfer-client", res.reason);
    SSL_CTX *ctx = tls_client_ctx(&cfg, argv[1]);
    unsigned char *out = malloc(size);
    SSL *ssl = ctx && out ? quic_connect(ctx, port, &fd, why, sizeof(why), &negotiated) : NULL;
    if (ssl)
        quic_watched(ssl, &negotiated);
    if (ssl)
        check_quic(&cfg, ssl, why, sizeof(why), checked, sizeof(checked));
    if (!ssl || why[0]) {
        SSL_free(ssl);
        SSL_CTX_free(ctx);
        free(out);
        return json_refusal("error", "quic-transfer-client", why[0] ? why : "cannot set up the client");
    }
    fill_pattern(out, size, 7);
    if (getenv("SSLPERF_TRANSFER_FLIP_A_BYTE"))     /* lets a test see that the reader's check catches it */
        out[size / 2] ^= 1;
    uint64_t writes = 0, t0 = sp_now_ns(SP_WALL), cpu0 = sp_now_ns(SP_PROCESS_CPU), end = t0 + (uint64_t)ms * 1000000u;
    int ok = 1;
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE);
    SSL_set_blocking_mode(ssl, 0);
    while (ok && sp_now_ns(SP_WALL) < end) {
        ok = write_all(ssl, fd, out, size, why, sizeof(why));
        writes += ok;
    }
    char count[64] = "";
    size_t got = 0;
    ok = ok && SSL_stream_conclude(ssl, 0) && read_count(ssl, fd, count, sizeof(count) - 1, &got, why, sizeof(why));
    uint64_t wall = sp_now_ns(SP_WALL) - t0, cpu = sp_now_ns(SP_PROCESS_CPU) - cpu0;
    count[got] = '\0';
    ok = ok && strtoull(count, NULL, 10) == writes * size;       /* the reader has all of it */
    printf("{\"type\":\"sent\",\"ok\":%s,\"writes\":%llu,\"bytes\":%llu,\"wall_ns\":%llu,\"cpu_ns\":%llu,\"checked\":",
           ok ? "true" : "false", (unsigned long long)writes, (unsigned long long)(writes * size),
           (unsigned long long)wall, (unsigned long long)cpu);
    json_string(checked);
    printf(",\"cipher\":");
    json_string(SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    json_negotiated(&negotiated);
    if (why[0]) {
        printf(",\"reason\":");
        json_string(why);
    }
    printf("}\n");
    SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(ctx);
    free(out);
    return ok ? 0 : 1;
}

#else /* no QUIC server in this library */

int quic_transfer_server(int argc, char **argv)
{
    (void)argc, (void)argv;
    return quic_refusal("quic-transfer-server");
}

int quic_transfer_client(int argc, char **argv)
{
    (void)argc, (void)argv;
    return quic_refusal("quic-transfer-client");
}

#endif
