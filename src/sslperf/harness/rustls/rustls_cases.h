/* The rustls backend's TLS cases: configuration (config.c), the in-memory pair (pair.c) and what a connection
 * negotiated (watch.c), shared by tls.c (handshakes, resumption), transfer.c (bulk transfer), memory.c and
 * loopback.c. */
#ifndef SSLPERF_RUSTLS_CASES_H
#define SSLPERF_RUSTLS_CASES_H

#include <stdint.h>

#include "harness.h"
#include "rustls.h"
#include "tls_names.h"

typedef struct {
    sp_tls_case tls;             /* new_ctx: a new client config (root store load, verifier) per connection */
    uint16_t version;            /* RUSTLS_TLS_VERSION_TLSV1_2 or _TLSV1_3 */
} rtls_config;

/* One direction of an in-memory transport: what one side wrote and the other has not read yet. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
} rtls_pipe;

/* Reading a pipe from `off` on (rtls_pipe_read is a rustls_read_callback over it). */
typedef struct {
    rtls_pipe *pipe;
    size_t off;
} rtls_reader;

rustls_io_result rtls_pipe_write(void *pipe, const uint8_t *buf, size_t n, size_t *out_n);   /* appends */
rustls_io_result rtls_pipe_read(void *reader, uint8_t *buf, size_t n, size_t *out_n);
/* Everything `conn` has to send, into `pipe` (*moved set when something was); 0 on failure. */
int rtls_flush(struct rustls_connection *conn, rtls_pipe *pipe, int *moved);

/* What a client's connection negotiated, read from the bytes it sends and receives (watch.c; rustls-ffi has no
 * message callback): each record counted to the side that sent it, and the server's plaintext handshake messages
 * (ServerHello or HelloRetryRequest; TLS 1.2's Certificate and ServerKeyExchange too) handed to core/wire.c. */
typedef struct {
    uint8_t header[5];
    size_t have, left;           /* the header's bytes so far; then the record's body bytes still to come */
} rtls_records;

typedef struct {
    sp_negotiated *n;
    int ciphered;                /* the server's handshake records are encrypted from here on (TLS 1.2, after CCS) */
    rtls_records side[2];        /* [0]: the server's records, [1]: the client's */
    size_t have, want;           /* the current message's bytes so far, and its whole length (0: header not read) */
    unsigned char msg[16384];    /* the current message, when it fits (a longer one is counted, not read) */
} rtls_watch;

void rtls_watch_start(rtls_watch *w, sp_negotiated *n);
/* `len` more bytes of the stream the client sent (`sent`) or received: whole records or any part of them. */
void rtls_watch_bytes(rtls_watch *w, int sent, const uint8_t *p, size_t len);
/* The connection done with: what the records did not say, from rustls-ffi's getters on the client. */
void rtls_watch_end(rtls_watch *w, const struct rustls_connection *client);

/* A client and a server connection over two pipes, and each side's CPU time while `timed`. */
typedef struct {
    struct rustls_connection *client, *server;
    rtls_pipe to_server, to_client;
    uint64_t client_ns, server_ns;
    int timed;
    rtls_watch *watch;           /* non-NULL: every record through rtls_step is read there */
} rtls_pair;

/* The thread's CPU clock while the pair is timed, else 0: a clock read costs a system call, and a handshake
 * reads it over twenty times (5% of an ECDSA handshake), so only every SPLIT_EVERY-th is timed side by side. */
static inline uint64_t rtls_now(const rtls_pair *pair)
{
    return pair->timed ? sp_now_ns(SP_THREAD_CPU) : 0;
}

prep_status rtls_parse(const case_name *name, rtls_config *cfg, prep_result *res);
/* A transfer case's configuration: PROTO and SUITE as named, X25519 and an ECDSA P-256 certificate. */
prep_status rtls_transfer_config(const char *proto, const char *suite, rtls_config *cfg, prep_result *res);
/* The server config, and the shared client config (NULL for new_config), for `cfg`. */
prep_status rtls_make_configs(const rtls_config *cfg, const struct rustls_server_config **server,
                              const struct rustls_client_config **client, prep_result *res);
const struct rustls_client_config *rtls_client_config(const rtls_config *cfg, prep_result *res);
/* A client config that trusts the certificates of the PEM file `roots` (a server of another library's CA). */
const struct rustls_client_config *rtls_client_config_trusting(const rtls_config *cfg, const char *roots,
                                                               prep_result *res);
/* The roots file the backend's own clients load (SSLPERF_CERT_DIR's bundle and the PEM CA), made once. */
const char *rtls_roots_file(prep_result *res);
/* Both ends of a new connection; 0 (and `res` set) on failure. */
int rtls_connect(rtls_pair *pair, const struct rustls_client_config *client, const struct rustls_server_config *server,
                 prep_result *res);
/* One exchange: the client's records to the server, read and processed, then the server's to the client
 * (*moved set when anything was sent); rustls' result (RUSTLS_RESULT_OK when both sides are well). */
unsigned int rtls_step(rtls_pair *pair, int *moved);
/* Each side's pending records to the other, read and processed, until neither has anything to say (at most
 * `rounds` exchanges); 0 when a side fails. */
int rtls_exchange(rtls_pair *pair, int rounds, prep_result *res);
void rtls_close(rtls_pair *pair);     /* frees both connections; the pipes stay for the next pair */
void rtls_pipes_free(rtls_pair *pair);
/* What a handshake negotiated, checked against `cfg` (and whether it resumed; a `default` group or suite is not
 * checked): `problem` is "" when it is what was asked, "group:NAME" when only the group differs; `checked` then
 * says what was seen. */
void rtls_check(const rtls_config *cfg, const rtls_pair *pair, int expect_resumed, char *problem, size_t problem_len,
                char *checked, size_t checked_len);
/* The case is n/a because the build negotiates `negotiated`, not the case's group: why, for its provider. */
void rtls_group_na(const rtls_config *cfg, const char *negotiated, prep_result *res);
prep_status rtls_fail(prep_result *res, unsigned int result, const char *what);   /* an error naming rustls' result */
prep_status prepare_rustls_transfer(const case_name *name, bench_case *out, prep_result *res);

#endif
