/* wolfSSL TLS connections as tls.c makes them, shared with memory.c and loopback.c. */
#ifndef SSLPERF_WOLFSSL_TLS_H
#define SSLPERF_WOLFSSL_TLS_H

#include <stddef.h>
#include <stdint.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include "harness.h"
#include "tls_names.h"

typedef struct {
    sp_tls_case tls;
    int sockets;             /* the contexts use wolfSSL's socket I/O (loopback.c), not the in-memory pipes */
} wtls_config;

/* One direction's records: what a side's I/O callbacks write to and read from. DTLS reads one datagram at a time:
 * a pipe of datagrams keeps each write's length before it. */
typedef struct {
    unsigned char *data;
    size_t len, off, cap;
    int datagrams;           /* DTLS: one write is one datagram */
    uint64_t sent;           /* bytes written, records and all, since the owner last cleared it */
} pipe_buf;

prep_status wtls_parse(const case_name *name, wtls_config *cfg, prep_result *res);
/* The server context, and the client's unless each connection makes its own (cfg->new_ctx). */
prep_status wtls_make_ctxs(const wtls_config *cfg, WOLFSSL_CTX **server, WOLFSSL_CTX **client, prep_result *res);
/* A client context trusting the PEM file `roots`. */
WOLFSSL_CTX *wtls_client_ctx(const wtls_config *cfg, const char *roots);
/* What `client` negotiated against `cfg` (and whether it resumed): `problem` "" and `checked` filled, or the
 * problem. */
void wtls_check(const wtls_config *cfg, WOLFSSL *client, int expect_resumed, char *problem, size_t plen,
                char *checked, size_t clen);
/* One wolfSSL_accept (server) or wolfSSL_connect step: 1 while it goes on or is done (*done set), 0 on failure. */
int wtls_step(WOLFSSL *ssl, int server, int *done);
/* The contexts' I/O callbacks; a connection's I/O contexts are its two pipe_bufs. */
int wtls_pipe_send(WOLFSSL *ssl, char *buf, int sz, void *ctx);
int wtls_pipe_recv(WOLFSSL *ssl, char *buf, int sz, void *ctx);
/* What `client` negotiated, into `n` (its getters; the bytes each pipe carried for the handshake). */
void wtls_negotiated(WOLFSSL *client, const pipe_buf *to_server, const pipe_buf *to_client, sp_negotiated *n);

#endif
