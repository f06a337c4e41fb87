/* What a client's connection over a stream negotiated, recorded past its handshake (tls_watch.c; loopback.c,
 * transfer.c, transfer_tcp.c): tls_setup.c's tls_watch for the handshake, then only the records the server sends
 * after it that carry handshake messages (a TLS 1.3 server's session tickets), never application data or alerts,
 * until tls_watched ends the record. */
#ifndef SSLPERF_TLS_WATCH_H
#define SSLPERF_TLS_WATCH_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "harness.h"

typedef struct {
    sp_negotiated *n;
    unsigned char header[16];       /* the last record's header received, until a message out of it says it counts */
    size_t header_len;
} tls_after;

/* After `client`'s handshake (tls_watch before it): from now on a record the server sends counts to its bytes when
 * a handshake message comes out of it. `after` lives until tls_watched(client, n). */
void tls_watch_after(SSL *client, tls_after *after, sp_negotiated *n);
/* Whether `client`'s connection negotiated what `n` recorded of another connection of the same contexts: version,
 * suite and (where the library says) group; "" in `problem`, or what differs. */
void tls_same_negotiation(SSL *client, const sp_negotiated *n, char *problem, size_t problem_len);

#endif
