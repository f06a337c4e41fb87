/* Memory per QUIC connection (OpenSSL 3.5+), through the driver of memory per TLS connection (core/memory.c):
 *
 *   harness quic-memory GROUP CERT N
 *
 * One process holds a listener on 127.0.0.1 (UDP) and N clients, each on a
 * UDP socket of its own; all are taken through the handshake in lockstep
 * (each round every client one step, then the listener takes in what came,
 * then every accepted connection one step), then the bytes the library holds
 * per established connection are counted as for TLS: the server side is what
 * freeing the accepted connections gives back, the client side what freeing
 * the clients gives back. The sockets, their BIOs and the listener are made
 * before the baseline and outlive the connections, so only what a connection
 * adds is counted: its QUIC engine and channel (a client has its own), stream
 * and packet buffers, TLS state. */
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

struct quic_memory {
    tls_config cfg;
    SSL_CTX *server_ctx, *client_ctx;
    long n, accepted;
    int listen_fd, port;
    SSL *listener, **client, **server;      /* the servers in the order the listener accepted them */
    BIO **net;
    struct pollfd *fds;                     /* the listener's socket, then each client's */
};

static int open_sockets(void *p, long n, char *why, size_t why_len)
{
    struct quic_memory *q = p;
    int ok = (q->net = calloc((size_t)n, sizeof(BIO *))) && (q->client = calloc((size_t)n, sizeof(SSL *)))
             && (q->server = calloc((size_t)n, sizeof(SSL *)))
             && (q->fds = calloc((size_t)n + 1, sizeof(struct pollfd)))
             && (q->listener = quic_listener(q->server_ctx, &q->listen_fd, &q->port)) != NULL;
    if (ok) {
        /* N clients' first flights arrive at once: room for them all, so none is dropped and waited for */
        int room = (int)(n * 4096 < (1 << 28) ? n * 4096 : 1 << 28);
        if (setsockopt(q->listen_fd, SOL_SOCKET, SO_RCVBUFFORCE, &room, sizeof(room)) != 0)
            setsockopt(q->listen_fd, SOL_SOCKET, SO_RCVBUF, &room, sizeof(room));
        q->fds[0] = (struct pollfd){.fd = q->listen_fd, .events = POLLIN};
    }
    for (long i = 0; ok && i < n; i++) {
        int fd = quic_udp_socket(q->port);
        q->fds[i + 1] = (struct pollfd){.fd = fd, .events = POLLIN};
        ok = fd >= 0 && (q->net[i] = BIO_new_dgram(fd, BIO_NOCLOSE)) != NULL && BIO_up_ref(q->net[i]);
    }
    if (!ok)
        snprintf(why, why_len, "cannot open %ld UDP sockets on 127.0.0.1", n + 1);
    return ok;
}

static int make_client(void *p, long i, char *why, size_t why_len)
{
    struct quic_memory *q = p;
    int ok = (q->client[i] = quic_client_new(q->client_ctx, q->net[i], q->port)) != NULL
             && SSL_set_blocking_mode(q->client[i], 0);
    if (!ok)
        snprintf(why, why_len, "cannot make QUIC client %ld", i);
    return ok;
}

/* A client's step, or an accepted connection's (one not accepted yet waits). */
static int step(void *p, long i, int server, int *done, char *why, size_t why_len)
{
    struct quic_memory *q = p;
    if (server && i >= q->accepted)
        return 1;
    if (tls_handshake_step(server ? q->server[i] : q->client[i], done))
        return 1;
    if (server) {
        snprintf(why, why_len, "the server's handshake %ld failed", i);
    } else {
        snprintf(why, why_len, "client %ld's handshake failed: ", i);
        ERR_error_string_n(ERR_get_error(), why + strlen(why), why_len - strlen(why));
    }
    return 0;
}

/* The listener's turn: the datagrams that came, and the connections they opened. */
static void accept_new(void *p)
{
    struct quic_memory *q = p;
    SSL_handle_events(q->listener);
    for (SSL *conn; q->accepted < q->n
                    && (conn = SSL_accept_connection(q->listener, SSL_ACCEPT_CONNECTION_NO_BLOCK)) != NULL;) {
        SSL_set_blocking_mode(conn, 0);
        q->server[q->accepted++] = conn;
    }
}

static void wait_network(void *p)
{
    struct quic_memory *q = p;
    poll(q->fds, (nfds_t)q->n + 1, 1);      /* a datagram in, or the QUIC timers' next millisecond */
}

static int check_first(void *p, long n, char *checked, size_t checked_len, char *why, size_t why_len)
{
    (void)n;
    struct quic_memory *q = p;
    check_quic(&q->cfg, q->client[0], why, why_len, checked, checked_len);
    return !why[0];
}

static void free_end(void *p, long i, int server)
{
    struct quic_memory *q = p;
    SSL **ends = server ? q->server : q->client;
    SSL_free(ends[i]);
    ends[i] = NULL;
}

static const sp_lockstep QUIC_LOCKSTEP = {
    .deadline_s = 120, .transports = open_sockets, .make = make_client, .step = step, .between = accept_new,
    .wait = wait_network, .settle = check_first, .free_end = free_end,
};

int quic_memory(int argc, char **argv)
{
    (void)argc;
    char case_id[CASE_ID_MAX], ca_file[600];
    long n = atol(argv[2]);
    struct quic_memory q = {.n = n, .listen_fd = -1};
    prep_result res = {0};
    snprintf(case_id, sizeof(case_id), "tls/quic-memory/%s/%s", argv[0], argv[1]);
    if (n < 1 || n > MAX_QUIC_CONNECTIONS)
        return json_refusal("error", case_id, "the number of QUIC connections must be 1 to 20000");
    if (!room_for(n))
        return json_refusal("error", case_id, "this process may not open a UDP socket per connection "
                                              "(RLIMIT_NOFILE); raise the limit or ask for fewer connections");
    if (!quic_handshake_config(argv[0], argv[1], &q.cfg, &res)
        || tls_make_ctxs(&q.cfg, &q.server_ctx, &q.client_ctx, ca_file, sizeof(ca_file), &res) != PREP_OK)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason);
    int rc = sp_memory_measure(&QUIC_LOCKSTEP, &q, case_id, n);
    for (long i = 0; q.net && i < n; i++) {
        BIO_free(q.net[i]);
        if (q.fds && q.fds[i + 1].fd > 0)
            close(q.fds[i + 1].fd);
    }
    SSL_free(q.listener);
    if (q.listen_fd >= 0)
        close(q.listen_fd);
    unlink(ca_file);
    free(q.net);
    free(q.client);
    free(q.server);
    free(q.fds);
    SSL_CTX_free(q.client_ctx);
    SSL_CTX_free(q.server_ctx);
    return rc;
}

#else

int quic_memory(int argc, char **argv)
{
    (void)argc, (void)argv;
    return quic_refusal("quic-memory");
}

#endif
