/* Bulk transfer in memory (transfer.c): after one handshake, the client writes SIZE bytes and the server reads
 * them all, again and again.
 *
 *   tls/transfer/PROTO/SUITE/SIZE    PROTO tls1.2 | tls1.3;
 *                                    SUITE aes-128-gcm | aes-256-gcm | chacha20-poly1305;
 *                                    SIZE the application's write, in bytes
 *
 * The loop, its send/receive time split and the check of the first write's bytes are the same for every
 * library; a backend connects the pair and says how its client writes and its server reads. */
#ifndef SSLPERF_TRANSFER_H
#define SSLPERF_TRANSFER_H

#include <stddef.h>

#include "harness.h"

typedef struct {
    const char *write_call;     /* the library's write, as a failure names it */
    size_t pair_size;           /* the backend's state of one connected pair, zeroed by the core */
    /* The pair for PROTO and SUITE, connected (one handshake; TLS 1.3: the client has taken its tickets), its
     * transport with room for a write of `size`; or why not in `res`. */
    prep_status (*connect)(void *pair, const char *proto, const char *suite, size_t size, prep_result *res);
    /* What the handshake negotiated against what was asked: PREP_OK and `seen` described, or why not. */
    prep_status (*check)(void *pair, prep_result *res, char *seen, size_t seen_len);
    /* The client's write and the server's read of at most `len` bytes: the bytes moved (a write's in records the
     * server can read), <= 0 on failure. The core calls again for the rest. */
    int (*write)(void *pair, const unsigned char *buf, int len);
    int (*read)(void *pair, unsigned char *buf, int len);
    void (*release)(void *pair);    /* what connect made, also when it failed; the core frees the pair */
    /* Optional (NULL: not recorded): what the checked connection negotiated, once check passed, into `n`. */
    void (*negotiated)(void *pair, sp_negotiated *n);
} sp_transfer_ops;

/* A transfer case (`name`: tls/transfer/PROTO/SUITE/SIZE) over the backend's `ops`, checked and ready to time. */
prep_status sp_prepare_transfer(const case_name *name, const sp_transfer_ops *ops, bench_case *out,
                                prep_result *res);

#endif
