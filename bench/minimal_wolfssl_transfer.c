/* The least a program can do to move bulk data through wolfSSL in memory,
 * written against wolfSSL's API alone, for bench/transfer_overhead.py: one
 * TLS 1.3 handshake with the one suite SUITE (wolfSSL's name, e.g.
 * TLS13-AES128-GCM-SHA256) and X25519 (the client verifies against CAFILE
 * for "localhost"), then again and again the client writes SIZE bytes into a
 * buffer through the I/O callbacks and the server reads SIZE bytes out.
 * Prints bytes per second over MS.
 *
 *   minimal_wolfssl_transfer CERT KEY CAFILE SUITE SIZE MS */
#define _POSIX_C_SOURCE 200809L
#include "minimal_common.h"
#include "minimal_wolfssl.h"

/* The client writes `size` bytes (into records in the pipe), the server reads `size` bytes out. */
static int transfer(WOLFSSL *client, WOLFSSL *server, const char *out, char *in, size_t size)
{
    for (size_t sent = 0; sent < size;) {
        int n = wolfSSL_write(client, out + sent, (int)(size - sent));
        if (n <= 0)
            return 0;
        sent += (size_t)n;
    }
    for (size_t got = 0; got < size;) {
        int n = wolfSSL_read(server, in + got, (int)(size - got));
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

int main(int argc, char **argv)
{
    WOLFSSL_CTX *sctx, *cctx;
    if (argc != 7)
        return 2;
    size_t size = strtoul(argv[5], NULL, 10);
    buffer to_server = buffer_of(size + size / 8 + 65536), to_client = buffer_of(65536);
    if (!make_contexts(argv[1], argv[2], argv[3], argv[4], &sctx, &cctx))
        return 1;
    WOLFSSL *client = wolfSSL_new(cctx), *server = wolfSSL_new(sctx);
    if (!connect_pair(client, server, &to_server, &to_client))
        return 1;
    char *out = malloc(size), *in = malloc(size);
    memset(out, 'x', size);
    for (minimal_clock clock = minimal_start(argv[6]);;) {
        if (!minimal_running(&clock))
            return minimal_report(&clock, (double)size);
        if (!transfer(client, server, out, in, size))
            return 1;
    }
}
