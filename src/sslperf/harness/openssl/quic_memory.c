/* Memory per QUIC connection (OpenSSL 3.5+), the QUIC counterpart of memory.c:
 *
 *   harness quic-memory GROUP CERT N
 *
 * One process holds a listener on 127.0.0.1 (UDP) and N clients, each on a
 * UDP socket of its own; all are taken through the handshake in lockstep
 * (every client one step, then the listener's port, per round), then the
 * bytes the library holds per established connection are counted as
 * memory.c counts them: the server side is what freeing the accepted
 * connections gives back, the client side what freeing the clients gives
 * back. The sockets, their BIOs and the listener are made before the
 * baseline and outlive the connections, so only what a connection adds is
 * counted: its QUIC engine and channel (a client has its own), stream and
 * packet buffers, TLS state. */
#define _GNU_SOURCE                 /* SO_RCVBUFFORCE */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "memory.h"
#include "quic_loopback.h"
#include "tls.h"

#include <openssl/ssl.h>

#define MAX_QUIC_CONNECTIONS 20000
#define HANDSHAKE_LIMIT_NS (120ull * 1000000000)

#if SP_OSSL_QUIC

/* Room for one socket per client (and a few more): the soft limit raised toward the hard one. */
static int room_for(long n)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return 0;
    rlim_t want = (rlim_t)n + 64;
    if (lim.rlim_cur < want && lim.rlim_max >= want) {
        lim.rlim_cur = want;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    return getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur >= want;
}

/* One handshake step of `ssl` without blocking: 1 when it may go on (*done set once finished), 0 on failure. */
static int step(SSL *ssl, char *done)
{
    int rc = SSL_do_handshake(ssl);
    if (rc == 1) {
        *done = 1;
        return 1;
    }
    int err = SSL_get_error(ssl, rc);
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
}

struct lockstep {
    long n, accepted, established;
    SSL *listener, **client, **server;
    char *client_done, *server_done;
    struct pollfd *fds;                     /* the listener's socket, then each client's */
};

/* Rounds until every client and every accepted connection has finished its handshake: 1, or 0 with `why`. */
static int handshake_all(struct lockstep *l, char *why, size_t why_len)
{
    uint64_t deadline = sp_now_ns(SP_WALL) + HANDSHAKE_LIMIT_NS;
    while (l->established < l->n) {
        long finished = 0;
        for (long i = 0; i < l->n; i++)
            if (!l->client_done[i] && !step(l->client[i], &l->client_done[i])) {
                snprintf(why, why_len, "client %ld's handshake failed: ", i);
                ERR_error_string_n(ERR_get_error(), why + strlen(why), why_len - strlen(why));
                return 0;
            }
        SSL_handle_events(l->listener);
        for (SSL *conn; l->accepted < l->n
                        && (conn = SSL_accept_connection(l->listener, SSL_ACCEPT_CONNECTION_NO_BLOCK)) != NULL;) {
            SSL_set_blocking_mode(conn, 0);
            l->server[l->accepted++] = conn;
        }
        for (long i = 0; i < l->accepted; i++) {
            if (!l->server_done[i] && !step(l->server[i], &l->server_done[i])) {
                snprintf(why, why_len, "the server's handshake %ld failed", i);
                return 0;
            }
            finished += l->server_done[i];
        }
        memory_sample_peak();
        long clients = 0;
        for (long i = 0; i < l->n; i++)
            clients += l->client_done[i];
        l->established = clients < finished ? clients : finished;
        if (sp_now_ns(SP_WALL) > deadline) {
            snprintf(why, why_len, "%ld of %ld connections established after %llu s", l->established, l->n,
                     HANDSHAKE_LIMIT_NS / 1000000000);
            return 0;
        }
        if (l->established < l->n)
            poll(l->fds, (nfds_t)l->n + 1, 1);   /* a datagram in, or the QUIC timers' next millisecond */
    }
    return 1;
}

int quic_memory(int argc, char **argv)
{
    (void)argc;
    char case_id[CASE_ID_MAX], ca_file[600], why[REASON_MAX] = "";
    long n = atol(argv[2]);
    tls_config cfg = {0};
    prep_result res = {0};
    SSL_CTX *server_ctx = NULL, *client_ctx = NULL;
    snprintf(case_id, sizeof(case_id), "tls/quic-memory/%s/%s", argv[0], argv[1]);
    if (n < 1 || n > MAX_QUIC_CONNECTIONS)
        return json_refusal("error", case_id, "the number of QUIC connections must be 1 to 20000");
    if (!room_for(n))
        return json_refusal("error", case_id, "this process may not open a UDP socket per connection "
                                              "(RLIMIT_NOFILE); raise the limit or ask for fewer connections");
    if (!quic_handshake_config(argv[0], argv[1], &cfg, &res)
        || tls_make_ctxs(&cfg, &server_ctx, &client_ctx, ca_file, sizeof(ca_file), &res) != PREP_OK)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason);

    struct lockstep l = {.n = n};
    int listen_fd = -1, port = 0, ok;
    BIO **net = calloc((size_t)n, sizeof(BIO *));
    l.client = calloc((size_t)n, sizeof(SSL *));
    l.server = calloc((size_t)n, sizeof(SSL *));
    l.client_done = calloc((size_t)n, 1);
    l.server_done = calloc((size_t)n, 1);
    l.fds = calloc((size_t)n + 1, sizeof(struct pollfd));
    ok = net && l.client && l.server && l.client_done && l.server_done && l.fds
         && (l.listener = quic_listener(server_ctx, &listen_fd, &port)) != NULL;
    if (ok) {
        /* N clients' first flights arrive at once: room for them all, so none is dropped and waited for */
        int room = (int)(n * 4096 < (1 << 28) ? n * 4096 : 1 << 28);
        if (setsockopt(listen_fd, SOL_SOCKET, SO_RCVBUFFORCE, &room, sizeof(room)) != 0)
            setsockopt(listen_fd, SOL_SOCKET, SO_RCVBUF, &room, sizeof(room));
        l.fds[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
    }
    for (long i = 0; ok && i < n; i++) {      /* sockets and their BIOs first: not counted */
        int fd = quic_udp_socket(port);
        l.fds[i + 1] = (struct pollfd){.fd = fd, .events = POLLIN};
        ok = fd >= 0 && (net[i] = BIO_new_dgram(fd, BIO_NOCLOSE)) != NULL && BIO_up_ref(net[i]);
    }
    if (!ok)
        snprintf(why, sizeof(why), "cannot open %ld UDP sockets on 127.0.0.1", n + 1);
    size_t baseline = memory_start();
    for (long i = 0; ok && i < n; i++) {
        ok = (l.client[i] = quic_client_new(client_ctx, net[i], port)) != NULL
             && SSL_set_blocking_mode(l.client[i], 0);
        if (!ok)
            snprintf(why, sizeof(why), "cannot make QUIC client %ld", i);
    }
    ok = ok && handshake_all(&l, why, sizeof(why));
    char problem[REASON_MAX] = "", checked[REASON_MAX] = "";
    if (ok) {
        check_quic(&cfg, l.client[0], problem, sizeof(problem), checked, sizeof(checked));
        if (problem[0])
            snprintf(why, sizeof(why), "%s", problem);
        ok = !problem[0];
    }
    memory_sample_peak();
    size_t all = memory_in_use();
    for (long i = 0; l.server && i < n; i++)
        SSL_free(l.server[i]);
    size_t without_servers = memory_in_use();
    for (long i = 0; l.client && i < n; i++)
        SSL_free(l.client[i]);
    size_t without_clients = memory_in_use();
    if (ok)
        memory_reply(case_id, n, baseline, all, without_servers, without_clients, checked);
    for (long i = 0; net && i < n; i++) {
        BIO_free(net[i]);
        if (l.fds && l.fds[i + 1].fd > 0)
            close(l.fds[i + 1].fd);
    }
    SSL_free(l.listener);
    if (listen_fd >= 0)
        close(listen_fd);
    unlink(ca_file);
    free(net);
    free(l.client);
    free(l.server);
    free(l.client_done);
    free(l.server_done);
    free(l.fds);
    SSL_CTX_free(client_ctx);
    SSL_CTX_free(server_ctx);
    return ok ? 0 : json_refusal("error", case_id, why);
}

#else

int quic_memory(int argc, char **argv)
{
    (void)argc, (void)argv;
    return quic_refusal("quic-memory");
}

#endif
