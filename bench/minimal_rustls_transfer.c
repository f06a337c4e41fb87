/* The least a program can do to move bulk data through rustls-ffi in memory,
 * written against rustls-ffi's C API alone, for bench/transfer_overhead.py:
 * one TLS 1.3 handshake with the one suite SUITE (a codepoint, e.g. 0x1301;
 * the client verifies against CAFILE for "localhost"), then again and again
 * the client writes SIZE bytes, its records go into a buffer, and the server
 * takes them in and reads SIZE bytes of plaintext out. Prints bytes per
 * second over MS.
 *
 *   minimal_rustls_transfer CERT KEY CAFILE SUITE SIZE MS */
#define _POSIX_C_SOURCE 200809L
#include "minimal_common.h"
#include "minimal_rustls.h"

/* The client writes `size` bytes, all of it into records; the server takes them in and reads `size` bytes out. */
static int transfer(struct rustls_connection *client, struct rustls_connection *server, buffer *pipe,
                    const uint8_t *out, uint8_t *in, size_t size)
{
    for (size_t sent = 0; sent < size;) {
        size_t n = 0;
        if (FAILED(rustls_connection_write(client, out + sent, size - sent, &n)) || !flush(client, pipe))
            return 0;
        sent += n;
    }
    for (size_t got = 0; got < size;) {
        size_t n = 0;
        unsigned int rc = rustls_connection_read(server, in + got, size - got, &n);
        if (rc == RUSTLS_RESULT_OK && n > 0) {
            got += n;
            continue;
        }
        if (rc != RUSTLS_RESULT_PLAINTEXT_EMPTY || pipe->off >= pipe->len
            || rustls_connection_read_tls(server, take, pipe, &n) != 0
            || FAILED(rustls_connection_process_new_packets(server)))
            return 0;
    }
    pipe->len = pipe->off = 0;
    return 1;
}

int main(int argc, char **argv)
{
    const struct rustls_server_config *server_config = NULL;
    const struct rustls_client_config *client_config = NULL;
    struct rustls_connection *client = NULL, *server = NULL;
    if (argc != 7)
        return 2;
    size_t size = strtoul(argv[5], NULL, 10);
    buffer to_server = buffer_of(size + size / 8 + 65536), to_client = buffer_of(65536);
    if (!make_configs(argv[1], argv[2], argv[3], (uint16_t)strtoul(argv[4], NULL, 0), &server_config, &client_config)
        || FAILED(rustls_client_connection_new(client_config, "localhost", &client))
        || FAILED(rustls_server_connection_new(server_config, &server))
        || !exchange(client, server, &to_server, &to_client))
        return 1;
    uint8_t *out = malloc(size), *in = malloc(size);
    memset(out, 'x', size);
    for (minimal_clock clock = minimal_start(argv[6]);;) {
        if (!minimal_running(&clock))
            return minimal_report(&clock, (double)size);
        if (!transfer(client, server, &to_server, out, in, size))
            return 1;
    }
}
