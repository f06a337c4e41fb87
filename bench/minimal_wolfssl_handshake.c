/* The least a program can do to run wolfSSL TLS 1.3 handshakes in memory,
 * written against wolfSSL's API alone, for bench/handshake_overhead.py: one
 * client and one server context of TLS 1.3, TLS13-AES128-GCM-SHA256 and
 * X25519 (the client verifies against CAFILE for "localhost"), then per
 * handshake two WOLFSSL objects whose records move through two buffers, the
 * client's read of the session tickets, both freed. Prints handshakes per
 * second over MS.
 *
 *   minimal_wolfssl_handshake CERT KEY CAFILE MS */
#define _POSIX_C_SOURCE 200809L
#include "minimal_common.h"
#include "minimal_wolfssl.h"

int main(int argc, char **argv)
{
    WOLFSSL_CTX *sctx, *cctx;
    if (argc != 5)
        return 2;
    if (!make_contexts(argv[1], argv[2], argv[3], "TLS13-AES128-GCM-SHA256", &sctx, &cctx))
        return 1;
    buffer to_server = buffer_of(1 << 16), to_client = buffer_of(1 << 16);
    for (minimal_clock clock = minimal_start(argv[4]);;) {
        if (!minimal_running(&clock))
            return minimal_report(&clock, 1);
        WOLFSSL *client = wolfSSL_new(cctx), *server = wolfSSL_new(sctx);
        if (!connect_pair(client, server, &to_server, &to_client))
            return 1;
        wolfSSL_free(client);
        wolfSSL_free(server);
    }
}
