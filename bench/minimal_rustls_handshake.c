/* The least a program can do to run rustls-ffi TLS 1.3 handshakes in memory,
 * written against rustls-ffi's C API alone, for bench/handshake_overhead.py:
 * one client and one server config of TLS 1.3 and TLS_AES_128_GCM_SHA256 only
 * (the server keeps no session and sends no ticket, the client verifies
 * against CAFILE for "localhost"), then per handshake two connections,
 * records moved by two buffers until neither side has anything to send, both
 * freed. Prints handshakes per second over MS.
 *
 *   minimal_rustls_handshake CERT KEY CAFILE MS */
#define _POSIX_C_SOURCE 200809L
#include "minimal_common.h"
#include "minimal_rustls.h"

int main(int argc, char **argv)
{
    const struct rustls_server_config *server_config = NULL;
    const struct rustls_client_config *client_config = NULL;
    if (argc != 5)
        return 2;
    if (!make_configs(argv[1], argv[2], argv[3], 0x1301, &server_config, &client_config))
        return 1;
    buffer to_server = buffer_of(1 << 16), to_client = buffer_of(1 << 16);
    for (minimal_clock clock = minimal_start(argv[4]);;) {
        if (!minimal_running(&clock))
            return minimal_report(&clock, 1);
        struct rustls_connection *client = NULL, *server = NULL;
        if (FAILED(rustls_client_connection_new(client_config, "localhost", &client))
            || FAILED(rustls_server_connection_new(server_config, &server))
            || !exchange(client, server, &to_server, &to_client))
            return 1;
        rustls_connection_free(client);
        rustls_connection_free(server);
    }
}
