/* What quic.c (requests) and quic_transfer.c (bulk transfer) share: the ALPN, the listening server and the
 * connecting client over loopback UDP, and the check of what a connection negotiated. OpenSSL 3.5+ only. */
#ifndef SSLPERF_QUIC_LOOPBACK_H
#define SSLPERF_QUIC_LOOPBACK_H

#include <stddef.h>

#include "compat.h"
#include "tls.h"

#define QUIC_ALPN "sslperf"
#define QUIC_IDLE_MS 30000      /* a server with nothing to do for this long stops by itself */

#if SP_OSSL_QUIC
#include <openssl/quic.h>

/* The TLS 1.3 handshake case of GROUP and CERT, for QUIC: 1, or 0 with `res` saying why not. */
int quic_handshake_config(const char *group, const char *cert, tls_config *cfg, prep_result *res);

/* A non-blocking listener of `ctx` on a UDP socket bound to 127.0.0.1 alone (its fd in *fd, its port in *port),
 * the ALPN answered; NULL when it cannot. */
SSL *quic_listener(SSL_CTX *ctx, int *fd, int *port);
/* quic_listener, then prints {"type":"listening",...} with the port and `ca_file`. NULL (and an error line printed) when it cannot. */
SSL *quic_listen(SSL_CTX *ctx, const char *ca_file, int *fd);
/* A UDP socket connected to 127.0.0.1:PORT, or -1. */
int quic_udp_socket(int port);
/* A client connection of `ctx` to 127.0.0.1:PORT over `net` (the SSL takes that reference; freed on failure):
 * peer address, SNI, host check and ALPN set, the handshake not started; NULL when it cannot be made. */
SSL *quic_client_new(SSL_CTX *ctx, BIO *net, int port);
/* A blocking QUIC connection of `ctx` to 127.0.0.1:PORT over a new UDP socket (*fd), handshake done, or NULL
 * with `why`; what it negotiates recorded in `watch` (unless NULL) until quic_watched. */
SSL *quic_connect(SSL_CTX *ctx, int port, int *fd, char *why, size_t why_len, sp_negotiated *watch);
/* Record what client connection `conn` negotiates into `n` from now on (quic_wire.c: its TLS handshake's messages,
 * and the bytes of each side's Initial, Handshake and Retry packets), and end the record (the callback off; the
 * library's own answers where the messages said nothing; version TLS 1.3). */
void quic_watch(SSL *conn, sp_negotiated *n);
void quic_watched(SSL *conn, sp_negotiated *n);
/* What `ssl` negotiated against `cfg`: QUIC, the suite, the group and the ALPN; "" and `checked` filled, or the
 * problem. */
void check_quic(const tls_config *cfg, SSL *ssl, char *problem, size_t problem_len, char *checked,
                size_t checked_len);
#else
/* {"type":"na",...} saying why this library has no QUIC to measure; returns 1. */
int quic_refusal(const char *what);
#endif

#endif
