/* QUIC over real loopback UDP with OpenSSL's own QUIC stack (3.5+), in the
 * shape of loopback.c's HTTPS over TCP, so a QUIC row and a TCP row of the
 * same group and certificate can stand side by side:
 *
 *   harness quic-server DIR GROUP CERT MAX_CONNECTIONS [CONCURRENCY]
 *       binds a UDP socket on 127.0.0.1 only (ephemeral port), prints
 *       {"type":"listening",...} with the port and the CA file a client must
 *       trust, then serves connections (ALPN "sslperf"): each client's first
 *       bidirectional stream carries a GET, answered with the same small
 *       response as over TCP and the stream concluded. Connections are served
 *       side by side by one event loop, at most CONCURRENCY (default 256)
 *       requests at once (closing connections apart). Exits after MAX_CONNECTIONS have closed, or after 30 s without
 *       a new one, printing {"type":"served",...} with its CPU time.
 *   harness quic-get PORT CA_FILE GROUP CERT COUNT [THREADS]
 *       COUNT sequential requests, each on a new QUIC connection: handshake
 *       ("pretransfer"), the GET on one stream, read to its end. Prints the
 *       connect, pretransfer and total nanoseconds of each, as https-get does.
 *       The first handshake is checked: QUIC, the TLS 1.3 suite, the group
 *       and the ALPN asked; what that connection negotiated is recorded
 *       (quic_wire.c) until its response is read. THREADS client threads
 *       (default 1) make COUNT each, at once.
 *
 * Libraries without a QUIC server (before OpenSSL 3.5; BoringSSL and AWS-LC,
 * whose QUIC API needs an outside QUIC stack; LibreSSL) answer n/a. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "compat.h"
#include "harness.h"
#include "families.h"
#include "loopback.h"
#include "quic_loopback.h"
#include "tls.h"

#include <openssl/ssl.h>

#if SP_OSSL_QUIC

#define MAX_LIVE 256

static const unsigned char ALPN_WIRE[] = "\x07" QUIC_ALPN;

int quic_handshake_config(const char *group, const char *cert, tls_config *cfg, prep_result *res)
{
    case_name name;
    if (!sp_handshake_name(&name, "tls1.3", group, cert, "shared") || tls_parse(&name, cfg, res) != PREP_OK)
        return 0;
    cfg->quic = 1;
    return 1;
}

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_len, const unsigned char *in,
                       unsigned int in_len, void *arg)
{
    (void)ssl, (void)arg;
    unsigned char *chosen = NULL;
    if (SSL_select_next_proto(&chosen, out_len, ALPN_WIRE, sizeof(ALPN_WIRE) - 1, in, in_len)
        != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

/* One connection being served: its request stream, the request read so far, and where it stands. */
struct served {
    SSL *conn, *stream;
    char request[4096];
    size_t len;
    enum { WAIT_STREAM, READ_REQUEST, CLOSING } state;
};

/* One step of `c`, as far as it can go without blocking; 1 when it is done and may be freed. */
static int serve_step(struct served *c)
{
    if (c->state == WAIT_STREAM) {
        c->stream = SSL_accept_stream(c->conn, SSL_ACCEPT_STREAM_NO_BLOCK);
        if (!c->stream)
            return SSL_get_shutdown(c->conn) != 0;           /* the client left before asking */
        c->state = READ_REQUEST;
    }
    if (c->state == READ_REQUEST) {
        size_t n = 0;
        while (c->len < sizeof(c->request) - 1
               && SSL_read_ex(c->stream, c->request + c->len, sizeof(c->request) - 1 - c->len, &n)) {
            c->len += n;
            c->request[c->len] = '\0';
        }
        int err = SSL_get_error(c->stream, 0);
        if (!strstr(c->request, "\r\n\r\n") && err != SSL_ERROR_ZERO_RETURN)
            return err != SSL_ERROR_WANT_READ;               /* more to come, or a failure */
        size_t written = 0;
        SSL_write_ex2(c->stream, SP_HTTP_RESPONSE, strlen(SP_HTTP_RESPONSE), SSL_WRITE_FLAG_CONCLUDE, &written);
        c->state = CLOSING;
    }
    /* The client closes once it has read the response; the server waits for that, without blocking. */
    return SSL_shutdown_ex(c->conn, SSL_SHUTDOWN_FLAG_WAIT_PEER, NULL, 0) == 1;
}

static void free_served(struct served *c)
{
    SSL_free(c->stream);
    SSL_free(c->conn);
    memset(c, 0, sizeof(*c));
}

/* The event loop: accept while more connections are due, step every live one, wait on the socket or the QUIC
 * stack's next timer. */
static int serve(SSL *listener, int fd, int max_connections, int concurrency)
{
    static struct served live[MAX_LIVE];
    int accepted = 0, closed = 0;
    uint64_t idle_since = sp_now_ns(SP_WALL), cpu0 = sp_now_ns(SP_PROCESS_CPU);
    while (closed < max_connections) {
        int active = 0, serving = 0;
        for (int i = 0; i < MAX_LIVE; i++)         /* a closing connection (draining) no longer serves a request */
            serving += live[i].conn && live[i].state != CLOSING;
        for (int i = 0; accepted < max_connections && serving < concurrency && i < MAX_LIVE; i++) {
            if (live[i].conn)
                continue;
            SSL *conn = SSL_accept_connection(listener, SSL_ACCEPT_CONNECTION_NO_BLOCK);
            if (!conn)
                break;
            SSL_set_blocking_mode(conn, 0);
            SSL_set_event_handling_mode(conn, SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT);
            live[i].conn = conn;
            accepted++;
            serving++;
            idle_since = sp_now_ns(SP_WALL);
        }
        for (int i = 0; i < MAX_LIVE; i++) {
            if (!live[i].conn)
                continue;
            active++;
            if (serve_step(&live[i])) {
                free_served(&live[i]);
                closed++;
            }
        }
        if (!active && sp_now_ns(SP_WALL) - idle_since > (uint64_t)QUIC_IDLE_MS * 1000000)
            break;                                           /* idle: stop by ourselves */
        SSL_handle_events(listener);                         /* send what the steps queued: one tick for all */
        struct timeval tv;
        int infinite = 1, wait_ms = 50;
        if (SSL_get_event_timeout(listener, &tv, &infinite) && !infinite)
            wait_ms = (int)(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        poll(&pfd, 1, wait_ms > 50 ? 50 : wait_ms);
        SSL_handle_events(listener);
    }
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i].conn)
            free_served(&live[i]);
    sp_served_line(closed, sp_now_ns(SP_PROCESS_CPU) - cpu0);
    return 0;
}

int quic_server(int argc, char **argv)
{
    tls_config cfg = {0};
    prep_result res = {0};
    SSL_CTX *ctx = NULL, *unused = NULL;
    char ca_file[600];
    int concurrency = argc == 5 ? sp_concurrency(argv[4]) : MAX_LIVE;
    if ((argc != 4 && argc != 5) || !concurrency || !quic_handshake_config(argv[1], argv[2], &cfg, &res)) {
        (res.status == PREP_NA ? sp_loopback_na : sp_loopback_fail)("bad quic-server arguments", res.reason);
        return 2;
    }
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    if (tls_make_ctxs(&cfg, &ctx, &unused, ca_file, sizeof(ca_file), &res) != PREP_OK) {
        (res.status == PREP_NA ? sp_loopback_na : sp_loopback_fail)("cannot set up the server", res.reason);
        SSL_CTX_free(ctx);
        return 1;
    }
    SSL_CTX_free(unused);
    int fd = -1;
    SSL *listener = quic_listen(ctx, ca_file, &fd);
    if (!listener) {
        SSL_CTX_free(ctx);
        return 1;
    }
    /* The connections' own calls do not drive the QUIC stack (each would tick every connection of the port): the
     * loop does, once per turn, as an event-driven server would. */
    SSL_set_event_handling_mode(listener, SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT);
    int rc = serve(listener, fd, atoi(argv[3]), concurrency);
    SSL_free(listener);
    SSL_CTX_free(ctx);
    close(fd);
    unlink(ca_file);
    return rc;
}

struct client {
    SSL_CTX *ctx;
    tls_config cfg;
};

void check_quic(const tls_config *cfg, SSL *ssl, char *problem, size_t problem_len, char *checked,
                       size_t checked_len)
{
    const unsigned char *alpn = NULL;
    unsigned int alpn_len = 0;
    char group[64];
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    tls_group_name(ssl, group, sizeof(group));
    problem[0] = '\0';
    if (!SSL_is_quic(ssl))
        snprintf(problem, problem_len, "the connection is not QUIC");
    else if (!tls_cipher_ok(cfg, ssl))
        snprintf(problem, problem_len, "negotiated cipher %s", SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    else if (!tls_group_ok(cfg, ssl))
        snprintf(problem, problem_len, "negotiated another group than asked: %s", group);
    else if (alpn_len != strlen(QUIC_ALPN) || memcmp(alpn, QUIC_ALPN, alpn_len) != 0)
        snprintf(problem, problem_len, "negotiated another ALPN than \"%s\"", QUIC_ALPN);
    else
        snprintf(checked, checked_len, "%s %s group %s ALPN %s", SSL_get_version(ssl),
                 SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)), group, QUIC_ALPN);
}

SSL *quic_listener(SSL_CTX *ctx, int *fd, int *port)
{
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);            /* loopback only */
    socklen_t len = sizeof(addr);
    SSL *listener = NULL;
    *fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (*fd < 0 || bind(*fd, (struct sockaddr *)&addr, sizeof(addr)) != 0
        || getsockname(*fd, (struct sockaddr *)&addr, &len) != 0 || !(listener = SSL_new_listener(ctx, 0))
        || !SSL_set_fd(listener, *fd) || !SSL_set_blocking_mode(listener, 0) || !SSL_listen(listener)) {
        SSL_free(listener);
        if (*fd >= 0)
            close(*fd);
        return NULL;
    }
    *port = ntohs(addr.sin_port);
    return listener;
}

SSL *quic_listen(SSL_CTX *ctx, const char *ca_file, int *fd)
{
    int port = 0;
    SSL *listener = quic_listener(ctx, fd, &port);
    if (!listener) {
        sp_loopback_fail("cannot listen on 127.0.0.1 over UDP", NULL);
        return NULL;
    }
    printf("{\"type\":\"listening\",\"port\":%d,\"protocol\":\"quic\",\"alpn\":\"%s\",\"ca_file\":", port, QUIC_ALPN);
    json_string(ca_file);
    printf(",\"library\":");
    json_string(sp_library_version());
    printf("}\n");
    fflush(stdout);
    return listener;
}

int quic_udp_socket(int port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

SSL *quic_client_new(SSL_CTX *ctx, BIO *net, int port)
{
    struct in_addr loopback = {.s_addr = htonl(INADDR_LOOPBACK)};
    BIO_ADDR *peer = BIO_ADDR_new();
    SSL *ssl = SSL_new(ctx);
    int ok = peer && ssl && BIO_ADDR_rawmake(peer, AF_INET, &loopback, sizeof(loopback), htons((uint16_t)port));
    if (ok)
        SSL_set_bio(ssl, net, net);                           /* the SSL takes the caller's reference */
    else
        BIO_free(net);
    ok = ok && SSL_set1_initial_peer_addr(ssl, peer) && SSL_set_tlsext_host_name(ssl, "localhost")
         && SSL_set1_host(ssl, "localhost") && SSL_set_alpn_protos(ssl, ALPN_WIRE, sizeof(ALPN_WIRE) - 1) == 0;
    BIO_ADDR_free(peer);
    if (!ok) {
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

SSL *quic_connect(SSL_CTX *ctx, int port, int *fd, char *why, size_t why_len, sp_negotiated *watch)
{
    BIO *net = NULL;
    if ((*fd = quic_udp_socket(port)) < 0 || !(net = BIO_new_dgram(*fd, BIO_NOCLOSE))) {
        snprintf(why, why_len, "cannot open a UDP socket to 127.0.0.1:%d", port);
        return NULL;
    }
    SSL *ssl = quic_client_new(ctx, net, port);
    if (ssl && watch)
        quic_watch(ssl, watch);
    if (!ssl || SSL_connect(ssl) != 1) {
        snprintf(why, why_len, "QUIC handshake failed: ");
        ERR_error_string_n(ERR_get_error(), why + strlen(why), why_len - strlen(why));
        SSL_free(ssl);
        ssl = NULL;
    }
    return ssl;
}

/* One request on a new connection (sp_one_get): 1 and the three times, or 0 with `why` set. */
static int one_get(void *p, int port, uint64_t times[3], char *why, size_t why_len, char *checked, size_t checked_len,
                   sp_negotiated *negotiated)
{
    struct client *c = p;
    uint64_t start = sp_now_ns(SP_WALL);
    int fd = -1, ok = 0;
    sp_negotiated *watch = checked && !checked[0] ? negotiated : NULL;
    SSL *ssl = quic_connect(c->ctx, port, &fd, why, why_len, watch);
    times[0] = 0;          /* UDP has no connection to make: the handshake is all */
    if (!ssl)
        goto done;
    times[1] = sp_now_ns(SP_WALL) - start;
    if (checked && !checked[0]) {
        check_quic(&c->cfg, ssl, why, why_len, checked, checked_len);
        if (why[0])
            goto done;
    }
    size_t written = 0, total = 0, got = 0;
    char buf[4096];
    if (!SSL_write_ex2(ssl, SP_HTTP_GET, strlen(SP_HTTP_GET), SSL_WRITE_FLAG_CONCLUDE, &written)) {
        snprintf(why, why_len, "cannot send the request");
        goto done;
    }
    while (SSL_read_ex(ssl, buf, sizeof(buf), &got))
        total += got;
    times[2] = sp_now_ns(SP_WALL) - start;
    ok = total == strlen(SP_HTTP_RESPONSE) && SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN;
    if (!ok)
        snprintf(why, why_len, "short response (%zu bytes)", total);
done:
    if (ssl && watch)
        quic_watched(ssl, watch);
    if (ssl) {
        SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);   /* no terminating period: the next request */
        SSL_free(ssl);
    }
    if (fd >= 0)
        close(fd);
    ERR_clear_error();
    return ok;
}

int quic_get(int argc, char **argv)
{
    struct client c = {0};
    prep_result res = {0};
    if ((argc != 5 && argc != 6) || !quic_handshake_config(argv[2], argv[3], &c.cfg, &res)) {
        sp_loopback_fail("bad quic-get arguments", res.reason);
        return 2;
    }
    int count = sp_request_count(argv[4]), threads = argc == 6 ? sp_concurrency(argv[5]) : 1;
    if (!count || !threads)
        return 2;
    if (!(c.ctx = tls_client_ctx(&c.cfg, argv[1]))) {
        sp_loopback_fail("cannot make the QUIC client context", NULL);
        return 1;
    }
    int rc = sp_https_get_clients(atoi(argv[0]), count, threads, one_get, &c);
    SSL_CTX_free(c.ctx);
    return rc;
}

#else /* no QUIC server in this library */

static const char *no_quic(void)
{
#if SP_BSSL
    return "BoringSSL's and AWS-LC's QUIC API hands the TLS handshake to a QUIC stack of one's own; they have no "
           "QUIC connections to measure";
#elif SP_LIBRESSL
    return "LibreSSL has no QUIC";
#else
    return "this OpenSSL has no QUIC server (OpenSSL 3.5 added one; the client came in 3.2)";
#endif
}

int quic_refusal(const char *what)
{
    printf("{\"type\":\"na\",\"case\":\"%s\",\"reason\":", what);
    json_string(no_quic());
    printf("}\n");
    return 1;
}

int quic_server(int argc, char **argv)
{
    (void)argc, (void)argv;
    return quic_refusal("quic-server");
}

int quic_get(int argc, char **argv)
{
    (void)argc, (void)argv;
    return quic_refusal("quic-get");
}

#endif
