/* TLS case configuration, shared by tls.c (the handshake loop) and
 * tls_setup.c (parsing, certificates, contexts, checks). */
#ifndef SSLPERF_TLS_H
#define SSLPERF_TLS_H

#include <netinet/in.h>
#include <openssl/ssl.h>

#include "harness.h"
#include "tls_names.h"

typedef struct {
    int proto;                /* TLS1_2_VERSION or TLS1_3_VERSION */
    const char *group;        /* default, x25519, p-256, p-384, x25519mlkem768 … (tls_names.h) */
    int group_row;            /* its row in tls_setup.c's GROUPS */
    const char *cert;         /* rsa-2048 … ed25519 */
    int cert_row;             /* its row in tls_setup.c's CERTS */
    int suite_row;            /* its row in tls_setup.c's SUITES (0, AES-128-GCM, for handshakes) */
    int new_ctx;              /* a new client SSL_CTX (with CA load) per connection */
    int resume;               /* 0, or resume by ticket (1) or session id (2) */
    int quic;                 /* contexts of OpenSSL's QUIC methods (quic.c), not TLS over a stream */
    int dtls;                 /* DTLS methods, over datagram pipes (dgram_pipe.c) */
    char note[REASON_MAX];
} tls_config;

prep_status tls_parse(const case_name *name, tls_config *cfg, prep_result *res);
/* A transfer case's connection: PROTO and SUITE as named, X25519 and an ECDSA P-256 certificate. */
prep_status tls_transfer_config(const char *proto, const char *suite, tls_config *cfg, prep_result *res);
prep_status prepare_transfer(const case_name *name, bench_case *out, prep_result *res);   /* transfer.c */
/* DTLS: an in-memory pair of datagram BIOs (dgram_pipe.c; each end's reference is the caller's), and the path MTU
 * every DTLS connection is set to (no MTU query: there is no socket). */
int dgram_pair(BIO **a, BIO **b);
#define DTLS_MTU 1400
/* The two ends of one in-memory connection: a BIO pair, or for DTLS a datagram pair. */
int tls_bio_pair(const tls_config *cfg, BIO **client, BIO **server);
prep_status tls_make_ctxs(tls_config *cfg, SSL_CTX **server, SSL_CTX **client, char *ca_file, size_t ca_file_len,
                          prep_result *res);
SSL_CTX *tls_client_ctx(const tls_config *cfg, const char *ca_file);
int tls_cipher_ok(const tls_config *cfg, const SSL *client);
int tls_group_ok(const tls_config *cfg, const SSL *client);
/* One SSL_do_handshake on a non-blocking pair: 1 while it goes on or is
 * done (*done set), 0 on failure. */
int tls_handshake_step(SSL *ssl, int *done);
/* The negotiated group as the library names it (or its codepoint; 1.1.1 cannot tell). */
void tls_group_name(const SSL *client, char *out, size_t len);
/* Record what `client`'s next handshake negotiates into `n` (tls_watch, before it starts), and finish the record
 * from the library's own answers (tls_watched, after it ended; the watch stops). */
void tls_watch(SSL *client, sp_negotiated *n);
void tls_watched(SSL *client, sp_negotiated *n);

#endif
