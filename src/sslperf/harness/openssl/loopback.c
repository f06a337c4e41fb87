/* TLS over real loopback TCP connections.
 *
 *   harness https-server DIR PROTO GROUP CERT MAX_CONNECTIONS
 *       listens on 127.0.0.1 (ephemeral port), prints {"type":"listening",...}
 *       with the port and the CA file the client must trust, then answers
 *       each connection's GET with a small response; exits after
 *       MAX_CONNECTIONS, or after 30 s without a connection.
 *   harness https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT
 *       COUNT sequential HTTPS GETs, curl's way: connect, handshake
 *       ("pretransfer"), request, read to the end; with `new`, a new SSL_CTX
 *       with the CA loaded per request, as curl did. Prints the connect,
 *       pretransfer and total nanoseconds of each request.
 * (Handshakes across threads on one shared SSL_CTX pair: `harness threads CASE N MS shared`, threads.c.) */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "tls.h"

#include <openssl/ssl.h>

#define RESPONSE "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nhello, world\n"
#define MAX_REQUESTS 100000

static int parse_config(const char *proto, const char *group, const char *cert, const char *ctx, tls_config *cfg,
                        prep_result *res)
{
    char id[CASE_ID_MAX];
    case_name name;
    snprintf(id, sizeof(id), "tls/handshake/%s/%s/%s/%s", proto, group, cert, ctx);
    strcpy(name.buf, id);
    name.n = 0;
    for (char *p = strtok(name.buf, "/"); p && name.n < MAX_PARTS; p = strtok(NULL, "/"))
        name.part[name.n++] = p;
    return tls_parse(&name, cfg, res) == PREP_OK;
}

static void fail(const char *what, const char *detail)
{
    char reason[REASON_MAX + 100];
    snprintf(reason, sizeof(reason), "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    printf("{\"type\":\"error\",\"reason\":");
    json_string(reason);
    printf("}\n");
    fflush(stdout);
}

int listen_loopback(struct sockaddr_in *addr, int backlog)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    socklen_t len = sizeof(*addr);
    memset(addr, 0, sizeof(*addr));
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);        /* loopback only; port 0: the kernel picks one */
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) != 0 || listen(fd, backlog) != 0
        || getsockname(fd, (struct sockaddr *)addr, &len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int https_server(int argc, char **argv)
{
    tls_config cfg = {0};
    prep_result res = {0};
    SSL_CTX *server = NULL, *unused = NULL;
    char ca_file[600];
    if (argc != 5 || !parse_config(argv[1], argv[2], argv[3], "shared", &cfg, &res)) {
        fail("bad https-server arguments", res.reason);
        return 2;
    }
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    if (tls_make_ctxs(&cfg, &server, &unused, ca_file, sizeof(ca_file), &res) != PREP_OK) {
        fail("cannot set up the server", res.reason);
        return 1;
    }
    SSL_CTX_free(unused);
    int max_connections = atoi(argv[4]), one = 1;
    struct sockaddr_in addr;
    int fd = listen_loopback(&addr, 64);
    if (fd < 0) {
        fail("cannot listen on 127.0.0.1", NULL);
        return 1;
    }
    printf("{\"type\":\"listening\",\"port\":%d,\"ca_file\":", ntohs(addr.sin_port));
    json_string(ca_file);
    printf(",\"library\":");
    json_string(OpenSSL_version(OPENSSL_VERSION));
    printf("}\n");
    fflush(stdout);
    for (int served = 0; served < max_connections; served++) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 30000) <= 0)
            break;                                         /* idle: stop by ourselves */
        int conn = accept(fd, NULL, NULL);
        if (conn < 0)
            continue;
        setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        SSL *ssl = SSL_new(server);
        char request[4096];
        int n = 0;
        if (ssl && SSL_set_fd(ssl, conn) && SSL_accept(ssl) == 1) {
            /* Read the request head, then answer. */
            int got;
            while (n < (int)sizeof(request) - 1 && (got = SSL_read(ssl, request + n, sizeof(request) - 1 - n)) > 0) {
                n += got;
                request[n] = '\0';
                if (strstr(request, "\r\n\r\n"))
                    break;
            }
            SSL_write(ssl, RESPONSE, (int)strlen(RESPONSE));
            SSL_shutdown(ssl);
        }
        SSL_free(ssl);
        close(conn);
    }
    close(fd);
    SSL_CTX_free(server);
    unlink(ca_file);
    return 0;
}

/* What the first handshake negotiated, against what was asked (the server may be another library):
 * "" and `checked` filled, or the problem. */
static void check_negotiated(const tls_config *cfg, const SSL *ssl, char *problem, size_t problem_len,
                             char *checked, size_t checked_len)
{
    char group[64];
    tls_group_name(ssl, group, sizeof(group));
    problem[0] = '\0';
    if (SSL_version(ssl) != cfg->proto)
        snprintf(problem, problem_len, "negotiated %s, not the version asked", SSL_get_version(ssl));
    else if (!tls_cipher_ok(cfg, ssl))
        snprintf(problem, problem_len, "negotiated cipher %s", SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    else if (!tls_group_ok(cfg, ssl))
        snprintf(problem, problem_len, "negotiated another group than asked: %s", group);
    else
        snprintf(checked, checked_len, "%s %s group %s", SSL_get_version(ssl),
                 SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)), group);
}

/* One GET: returns 1 and the three times, or 0 with `why` set; the first one's negotiation is checked. */
static int one_get(int port, SSL_CTX *shared, const tls_config *cfg, const char *ca_file, uint64_t times[3],
                   char *why, size_t why_len, char *checked, size_t checked_len)
{
    uint64_t start = sp_now_ns(SP_WALL);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, ok = 0;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    SSL_CTX *ctx = NULL;
    SSL *ssl = NULL;
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        snprintf(why, why_len, "cannot connect to 127.0.0.1:%d", port);
        goto done;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    times[0] = sp_now_ns(SP_WALL) - start;
    ctx = shared ? shared : tls_client_ctx(cfg, ca_file);
    if (!ctx || !(ssl = SSL_new(ctx)) || !SSL_set_fd(ssl, fd) || !SSL_set_tlsext_host_name(ssl, "localhost")
        || SSL_connect(ssl) != 1) {
        snprintf(why, why_len, "handshake failed: ");
        ERR_error_string_n(ERR_get_error(), why + strlen(why), why_len - strlen(why));
        goto done;
    }
    times[1] = sp_now_ns(SP_WALL) - start;
    if (checked && !checked[0]) {
        check_negotiated(cfg, ssl, why, why_len, checked, checked_len);
        if (why[0])
            goto done;
    }
    static const char get[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: sslperf\r\nConnection: close\r\n\r\n";
    char buf[4096];
    size_t total = 0;
    int got;
    if (SSL_write(ssl, get, (int)strlen(get)) <= 0) {
        snprintf(why, why_len, "cannot send the request");
        goto done;
    }
    while ((got = SSL_read(ssl, buf, sizeof(buf))) > 0)
        total += (size_t)got;
    times[2] = sp_now_ns(SP_WALL) - start;
    ok = total == strlen(RESPONSE);
    if (!ok)
        snprintf(why, why_len, "short response (%zu bytes)", total);
done:
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
    }
    if (!shared)
        SSL_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    ERR_clear_error();
    return ok;
}

static void print_array(const char *key, const uint64_t *v, int n)
{
    printf(",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        printf(i ? ",%llu" : "%llu", (unsigned long long)v[i]);
    printf("]");
}

int https_get(int argc, char **argv)
{
    tls_config cfg = {0};
    prep_result res = {0};
    if (argc != 7 || !parse_config(argv[2], argv[3], argv[4], argv[5], &cfg, &res)) {
        fail("bad https-get arguments", res.reason);
        return 2;
    }
    int port = atoi(argv[0]), count = atoi(argv[6]);
    if (count < 1 || count > MAX_REQUESTS) {
        fail("request count out of range", NULL);
        return 2;
    }
    uint64_t *connect_ns = calloc((size_t)count, sizeof(uint64_t)), *tls_ns = calloc((size_t)count, sizeof(uint64_t)),
             *total_ns = calloc((size_t)count, sizeof(uint64_t));
    SSL_CTX *shared = cfg.new_ctx ? NULL : tls_client_ctx(&cfg, argv[1]);
    char why[300] = "", checked[REASON_MAX] = "";
    int done = 0;
    for (; done < count; done++) {
        uint64_t t[3] = {0, 0, 0};
        if (!one_get(port, shared, &cfg, argv[1], t, why, sizeof(why), done == 0 ? checked : NULL, sizeof(checked)))
            break;
        connect_ns[done] = t[0];
        tls_ns[done] = t[1];
        total_ns[done] = t[2];
    }
    printf("{\"type\":\"requests\",\"library\":");
    json_string(OpenSSL_version(OPENSSL_VERSION));
    print_array("connect_ns", connect_ns, done);
    print_array("pretransfer_ns", tls_ns, done);
    print_array("total_ns", total_ns, done);
    if (checked[0]) {
        printf(",\"checked\":");
        json_string(checked);
    }
    if (why[0]) {
        printf(",\"error\":");
        json_string(why);
    }
    printf("}\n");
    SSL_CTX_free(shared);
    free(connect_ns);
    free(tls_ns);
    free(total_ns);
    return done == count ? 0 : 1;
}
