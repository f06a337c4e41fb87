/* Memory per rustls connection, as openssl/memory.c measures it: N client and
 * server connections taken through the handshake in lockstep (every
 * connection one exchange per round), then the bytes held per established
 * connection, each side apart, and the peak during the handshakes.
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N
 *
 * rustls allocates through the C allocator (Rust's System allocator in a
 * static library), so the bytes are glibc's statistics (mallinfo2: in use,
 * the peak sampled after each round). One pair of pipes, made before the
 * baseline and large enough for any flight, carries every connection's
 * records in turn, so transports are not counted: only what making the
 * connections and their handshakes add. The server side is what freeing
 * the servers gives back, the client side what freeing the clients does. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rustls_cases.h"

#define MAX_CONNECTIONS 100000
#define PIPE_BYTES (256 * 1024)

static size_t in_use(void)
{
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int rustls_memory(int argc, char **argv)
{
    (void)argc;
    const char *case_id = argv[0];
    long n = atol(argv[1]);
    case_name name;
    prep_result res = {0};
    rtls_config cfg;
    const struct rustls_server_config *server_config = NULL;
    const struct rustls_client_config *client_config = NULL;
    if (n < 1 || n > MAX_CONNECTIONS)
        return json_refusal("error", case_id, "the number of connections must be 1 to 100000");
    if (!sp_split_name(case_id, &name) || rtls_parse(&name, &cfg, &res) != PREP_OK || cfg.resume || cfg.new_config)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason[0] ? res.reason
                            : "memory is measured on full handshakes with shared configs: "
                              "tls/handshake/PROTO/GROUP/CERT/shared");
    if (rtls_make_configs(&cfg, &server_config, &client_config, &res) != PREP_OK)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason);

    struct rustls_connection **client = calloc((size_t)n, sizeof(*client)), **server = calloc((size_t)n, sizeof(*server));
    char *done = calloc((size_t)n, 1);
    rtls_pair scratch = {0};
    scratch.to_server.data = malloc(PIPE_BYTES);
    scratch.to_client.data = malloc(PIPE_BYTES);
    scratch.to_server.cap = scratch.to_client.cap = PIPE_BYTES;
    int ok = client && server && done && scratch.to_server.data && scratch.to_client.data;
    size_t baseline = in_use(), peak = baseline;
    for (long i = 0; ok && i < n; i++)
        ok = rustls_client_connection_new(client_config, "localhost", &client[i]) == RUSTLS_RESULT_OK
             && rustls_server_connection_new(server_config, &server[i]) == RUSTLS_RESULT_OK;
    long established = 0;
    for (int round = 0; ok && established < n && round < 64; round++) {
        established = 0;
        for (long i = 0; ok && i < n; i++) {
            if (done[i]) {
                established++;
                continue;
            }
            int moved = 0;
            scratch.client = client[i];
            scratch.server = server[i];
            ok = rtls_step(&scratch, &moved) == RUSTLS_RESULT_OK;
            /* Established once neither side is handshaking and nothing more moves (TLS 1.3: after the
             * client has the server's last flight). */
            done[i] = (char)(ok && !moved && !rustls_connection_is_handshaking(client[i])
                             && !rustls_connection_is_handshaking(server[i]));
        }
        size_t now = in_use();
        if (now > peak)
            peak = now;
    }
    ok = ok && established == n;
    size_t all = in_use();
    for (long i = 0; server && i < n; i++)
        rustls_connection_free(server[i]);
    size_t without_servers = in_use();
    for (long i = 0; client && i < n; i++)
        rustls_connection_free(client[i]);
    size_t without_clients = in_use();
    if (ok) {
        printf("{\"type\":\"memory\",\"case\":");
        json_string(case_id);
        printf(",\"connections\":%ld,\"method\":\"C allocator statistics (mallinfo2)\",\"baseline\":%zu,"
               "\"established\":%zu,\"peak\":%zu,\"server_bytes\":%zu,\"client_bytes\":%zu}\n",
               n, baseline, all, peak, all - without_servers, without_servers - without_clients);
    }
    free(scratch.to_server.data);
    free(scratch.to_client.data);
    free(done);
    free(client);
    free(server);
    rustls_client_config_free(client_config);
    rustls_server_config_free(server_config);
    return ok ? 0 : json_refusal("error", case_id, "a handshake failed");
}
