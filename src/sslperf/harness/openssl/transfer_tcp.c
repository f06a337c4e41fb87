/* Bulk transfer over loopback TCP, with kernel TLS on or off.
 *
 *   harness transfer-server DIR PROTO SUITE SIZE on|off
 *       listens on 127.0.0.1 (ephemeral port), prints {"type":"listening",...}
 *       with the port, the CA file and whether this kernel has the `tls`
 *       module; takes the client's recorded connection (a handshake, closed),
 *       then the measured one: reads until the client closes, checks every
 *       byte against the writer's pattern, prints {"type":"received",...}.
 *   harness transfer-client PORT CA_FILE PROTO SUITE SIZE MS on|off
 *       first records what a connection negotiates (a handshake watched, the
 *       server's tickets read, closed; kernel TLS off: the records must pass
 *       through libssl), then connects again, handshakes (verifying the
 *       server), checks the suite and that it negotiated as recorded, writes
 *       SIZE-byte writes for MS milliseconds, closes; prints {"type":"sent",...}
 *       with the bytes, wall and CPU time, whether the connection really sent
 *       through the kernel (BIO_get_ktls_send), and "negotiated". (A record
 *       layer made while a message callback is set calls into libssl for every
 *       record on OpenSSL 3.2+: the measured connection has none.)
 *
 * With `on`, both sides set SSL_OP_ENABLE_KTLS; whether the library then
 * hands the keys to the kernel depends on the library (built with
 * enable-ktls), the suite and the kernel (the `tls` upper-layer protocol),
 * and each reply says what happened rather than assume it. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "loopback.h"
#include "tls.h"
#include "tls_watch.h"

#include <openssl/ssl.h>

#ifndef TCP_ULP
#define TCP_ULP 31
#endif
#define MAX_WRITE (16u * 1024 * 1024)

#ifdef SSL_OP_ENABLE_KTLS
static int want_ktls(const char *arg)
{
    return strcmp(arg, "on") == 0;
}
#endif

/* Whether the kernel lets a TCP socket take the `tls` upper-layer protocol:
 * tried on a throwaway connection to our own listening socket. */
static void kernel_tls(int listener, const struct sockaddr_in *addr, char *out, size_t len)
{
    int client = socket(AF_INET, SOCK_STREAM, 0), server = -1;
    if (client < 0 || connect(client, (const struct sockaddr *)addr, sizeof(*addr)) != 0
        || (server = accept(listener, NULL, NULL)) < 0)
        snprintf(out, len, "unknown (no test connection)");
    else if (setsockopt(server, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) == 0)
        snprintf(out, len, "yes");
    else
        snprintf(out, len, "no: setsockopt(TCP_ULP, \"tls\") failed with %s%s", strerror(errno),
                 errno == ENOENT ? " (the kernel has no tls module)" : "");
    if (client >= 0)
        close(client);
    if (server >= 0)
        close(server);
}

/* Whether the kernel carries this connection's records in one direction. */
static int kernel_carries(SSL *ssl, int sending)
{
    (void)ssl;       /* some builds define the BIO_get_ktls_* macros without using their argument */
#if defined(BIO_get_ktls_send) && defined(BIO_get_ktls_recv)
    return (sending ? BIO_get_ktls_send(SSL_get_wbio(ssl)) : BIO_get_ktls_recv(SSL_get_rbio(ssl))) == 1;
#else
    (void)sending;
    return 0;
#endif
}

/* The library's side of kernel TLS: "" when it can try, else why not. */
static const char *library_ktls(void)
{
#if SP_BSSL
    return "this library has no kernel TLS";
#elif defined(OPENSSL_NO_KTLS) || !defined(BIO_get_ktls_send)
    return "this build of the library has kernel TLS compiled out (it needs enable-ktls: the +ktls variant)";
#else
    return "";      /* 1.1.1 uses it whenever it can; 3.x when SSL_OP_ENABLE_KTLS is set */
#endif
}

/* The next connection to `fd`, waited for 30 s at most; -1 without one. */
static int accept_within(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, 30000) > 0 ? accept(fd, NULL, NULL) : -1;
}

/* The client's recorded connection: its handshake, then read until its close_notify, and ours. */
static void serve_recorded(SSL_CTX *server, int fd)
{
    int conn = accept_within(fd);
    SSL *ssl = conn >= 0 ? SSL_new(server) : NULL;
    char buf[256];
    if (ssl && SSL_set_fd(ssl, conn) && SSL_accept(ssl) == 1) {
        while (SSL_read(ssl, buf, sizeof(buf)) > 0)
            ;
        SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    if (conn >= 0)
        close(conn);
    ERR_clear_error();
}

/* What a connection of `ctx` to the server negotiates, recorded in `n` (tls_watch.h): its handshake, and the
 * records carrying the server's tickets, read on the way to its close_notify. 1, or 0 if it could not connect. */
static int record_negotiation(SSL_CTX *ctx, int port, sp_negotiated *n)
{
    int fd = sp_connect_loopback(port);
    SSL *ssl = fd >= 0 ? SSL_new(ctx) : NULL;
    tls_after after;
    char buf[256];
    int ok = ssl && SSL_set_fd(ssl, fd) && SSL_set_tlsext_host_name(ssl, "localhost");
    if (ok)
        tls_watch(ssl, n);
    ok = ok && SSL_connect(ssl) == 1;
    if (ok) {
        tls_watch_after(ssl, &after, n);
        if (SSL_shutdown(ssl) == 0)
            while (SSL_read(ssl, buf, sizeof(buf)) > 0)
                ;
        tls_watched(ssl, n);
    }
    SSL_free(ssl);
    if (fd >= 0)
        close(fd);
    ERR_clear_error();
    return ok;
}

static prep_status setup(const char *proto, const char *suite, const char *ktls, SSL_CTX **server, SSL_CTX **client,
                         char *ca_file, size_t ca_len, prep_result *res)
{
    tls_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    prep_status status = tls_transfer_config(proto, suite, &cfg, res);
    if (status == PREP_OK)
        status = tls_make_ctxs(&cfg, server, client, ca_file, ca_len, res);
#ifdef SSL_OP_ENABLE_KTLS
    if (status == PREP_OK && want_ktls(ktls)) {
        SSL_CTX_set_options(*server, SSL_OP_ENABLE_KTLS);
        SSL_CTX_set_options(*client, SSL_OP_ENABLE_KTLS);
    }
#else
    (void)ktls;
#endif
    return status;
}

int transfer_server(int argc, char **argv)
{
    (void)argc;
    SSL_CTX *server = NULL, *client = NULL;
    prep_result res = {0};
    char ca_file[600], kernel[200];
    size_t size = 0;
    signal(SIGPIPE, SIG_IGN);         /* a client gone before our close_notify is no crash */
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    if (!parse_size(argv[3], &size) || size > MAX_WRITE)
        return json_refusal("error", "transfer-server", "the write size must be 1 to 16777216 bytes");
    if (setup(argv[1], argv[2], argv[4], &server, &client, ca_file, sizeof(ca_file), &res) != PREP_OK)
        return json_refusal(res.status == PREP_NA ? "na" : "error", "transfer-server", res.reason);
    struct sockaddr_in addr;
    int fd = listen_loopback(&addr, 4);
    if (fd < 0)
        return json_refusal("error", "transfer-server", "cannot listen on 127.0.0.1");
    kernel_tls(fd, &addr, kernel, sizeof(kernel));
    printf("{\"type\":\"listening\",\"port\":%d,\"ca_file\":", ntohs(addr.sin_port));
    json_string(ca_file);
    printf(",\"kernel_tls\":");
    json_string(kernel);
    printf(",\"library_ktls\":");
    json_string(library_ktls());
    printf("}\n");
    fflush(stdout);
    unsigned char *expected = malloc(size), *buf = malloc(size < 65536 ? 65536 : size);
    serve_recorded(server, fd);
    int conn = expected && buf ? accept_within(fd) : -1;
    SSL *ssl = conn >= 0 ? SSL_new(server) : NULL;
    uint64_t received = 0, mismatched = 0, cpu0 = sp_now_ns(SP_PROCESS_CPU);
    int ok = ssl && SSL_set_fd(ssl, conn) && SSL_accept(ssl) == 1;
    if (ok) {
        fill_pattern(expected, size, 7);
        int got;
        while ((got = SSL_read(ssl, buf, (int)(size < 65536 ? 65536 : size))) > 0) {
            /* the stream is the writer's buffer again and again: compare it piece by piece */
            for (size_t at = 0; at < (size_t)got;) {
                size_t offset = (size_t)((received + at) % size), n = size - offset;
                n = n < (size_t)got - at ? n : (size_t)got - at;
                mismatched += memcmp(buf + at, expected + offset, n) != 0;
                at += n;
            }
            received += (uint64_t)got;
        }
    }
    printf("{\"type\":\"received\",\"ok\":%s,\"bytes\":%llu,\"mismatched_pieces\":%llu,\"ktls_recv\":%s,\"cpu_ns\":%llu}\n",
           ok ? "true" : "false", (unsigned long long)received, (unsigned long long)mismatched,
           ssl && kernel_carries(ssl, 0) ? "true" : "false", (unsigned long long)(sp_now_ns(SP_PROCESS_CPU) - cpu0));
    fflush(stdout);
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
    }
    if (conn >= 0)
        close(conn);
    close(fd);
    free(expected);
    free(buf);
    SSL_CTX_free(server);
    SSL_CTX_free(client);
    unlink(ca_file);
    return ok ? 0 : 1;
}

int transfer_client(int argc, char **argv)
{
    (void)argc;
    int port = atoi(argv[0]), ms = atoi(argv[5]);
    size_t size = 0;
    if (!parse_size(argv[4], &size) || size > MAX_WRITE || ms < 1)
        return json_refusal("error", "transfer-client", "bad size or duration");
    tls_config cfg;
    prep_result res = {0};
    memset(&cfg, 0, sizeof(cfg));
    if (tls_transfer_config(argv[2], argv[3], &cfg, &res) != PREP_OK)
        return json_refusal("error", "transfer-client", res.reason);
    SSL_CTX *ctx = tls_client_ctx(&cfg, argv[1]);
    sp_negotiated negotiated = {0};
    if (!ctx || !record_negotiation(ctx, port, &negotiated))
        return json_refusal("error", "transfer-client", "cannot connect and handshake with the server");
#ifdef SSL_OP_ENABLE_KTLS
    if (want_ktls(argv[6]))
        SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
#endif
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    SSL *ssl = NULL;
    unsigned char *out = malloc(size);
    if (!ctx || !out || fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0
        || !(ssl = SSL_new(ctx)) || !SSL_set_fd(ssl, fd) || !SSL_set_tlsext_host_name(ssl, "localhost")
        || SSL_connect(ssl) != 1)
        return json_refusal("error", "transfer-client", "cannot connect and handshake with the server");
    if (!tls_cipher_ok(&cfg, ssl)) {
        char why[REASON_MAX];
        const char *got = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
        if (SP_BORINGSSL && cfg.proto == TLS1_3_VERSION) {
            snprintf(why, sizeof(why), "BoringSSL chooses the TLS 1.3 cipher suite itself (it negotiated %s)", got);
            return json_refusal("na", "transfer-client", why);
        }
        snprintf(why, sizeof(why), "negotiated cipher %s, not the one asked", got);
        return json_refusal("error", "transfer-client", why);
    }
    char differs[REASON_MAX];
    tls_same_negotiation(ssl, &negotiated, differs, sizeof(differs));
    if (differs[0])
        return json_refusal("error", "transfer-client", differs);
    fill_pattern(out, size, 7);
    if (getenv("SSLPERF_TRANSFER_FLIP_A_BYTE"))     /* lets a test see that the reader's check catches it */
        out[size / 2] ^= 1;
    uint64_t writes = 0, t0 = sp_now_ns(SP_WALL), cpu0 = sp_now_ns(SP_PROCESS_CPU), end = t0 + (uint64_t)ms * 1000000u;
    int ok = 1;
    while (ok && sp_now_ns(SP_WALL) < end) {
        for (size_t done = 0; ok && done < size;) {
            int n = SSL_write(ssl, out + done, (int)(size - done));
            ok = n > 0;
            done += ok ? (size_t)n : 0;
        }
        writes += ok;
    }
    uint64_t wall = sp_now_ns(SP_WALL) - t0, cpu = sp_now_ns(SP_PROCESS_CPU) - cpu0;
    int sent_by_kernel = kernel_carries(ssl, 1);
    /* close_notify, then read to the server's: closing with unread bytes (TLS 1.3's session
     * tickets) would make the kernel reset the connection and drop what the server has not read */
    if (SSL_shutdown(ssl) == 0)
        while (SSL_read(ssl, out, (int)size) > 0)
            ;
    printf("{\"type\":\"sent\",\"ok\":%s,\"writes\":%llu,\"bytes\":%llu,\"wall_ns\":%llu,\"cpu_ns\":%llu,"
           "\"ktls_send\":%s,\"cipher\":", ok ? "true" : "false", (unsigned long long)writes,
           (unsigned long long)(writes * size), (unsigned long long)wall, (unsigned long long)cpu,
           sent_by_kernel ? "true" : "false");
    json_string(SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    json_negotiated(&negotiated);
    printf("}\n");
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(ctx);
    free(out);
    return ok ? 0 : 1;
}
