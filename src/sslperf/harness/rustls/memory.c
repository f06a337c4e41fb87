/* Memory per rustls connection (core/memory.c drives it):
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N
 *
 * rustls allocates through the C allocator (Rust's System allocator in a
 * static library), so the bytes are glibc's statistics. One pair of pipes,
 * made before the baseline and large enough for any flight, carries every
 * connection's records in turn, so transports are not counted; a
 * connection's records therefore move both ways in its client's step (one
 * exchange per round), and its server's step only reports that exchange. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "harness.h"
#include "memory.h"
#include "rustls_cases.h"

#define PIPE_BYTES (256 * 1024)

typedef struct {
    rtls_config cfg;
    const struct rustls_server_config *server_config;
    const struct rustls_client_config *client_config;
    struct rustls_connection **ends[2];     /* [0]: the clients, [1]: the servers */
    char *established;
    rtls_pair scratch;                      /* the pipes every connection's exchange goes through */
} rustls_memory;

static void *open_case(const case_name *name, prep_result *res)
{
    rustls_memory *m = calloc(1, sizeof(*m));
    if (m && rtls_parse(name, &m->cfg, res) == PREP_OK)
        return m;
    free(m);
    return NULL;
}

static prep_status make_configs(void *p, prep_result *res)
{
    rustls_memory *m = p;
    return rtls_make_configs(&m->cfg, &m->server_config, &m->client_config, res);
}

static int transports(void *p, long n, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    rustls_memory *m = p;
    m->scratch.to_server.data = malloc(PIPE_BYTES);
    m->scratch.to_client.data = malloc(PIPE_BYTES);
    m->scratch.to_server.cap = m->scratch.to_client.cap = PIPE_BYTES;
    m->ends[0] = calloc((size_t)n, sizeof(*m->ends[0]));
    m->ends[1] = calloc((size_t)n, sizeof(*m->ends[1]));
    m->established = calloc((size_t)n, 1);
    return m->ends[0] && m->ends[1] && m->established && m->scratch.to_server.data && m->scratch.to_client.data;
}

static int make_pair(void *p, long i, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    rustls_memory *m = p;
    return rustls_client_connection_new(m->client_config, "localhost", &m->ends[0][i]) == RUSTLS_RESULT_OK
           && rustls_server_connection_new(m->server_config, &m->ends[1][i]) == RUSTLS_RESULT_OK;
}

static int step(void *p, long i, int server, int *done, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    rustls_memory *m = p;
    if (!server) {
        int moved = 0;
        m->scratch.client = m->ends[0][i];
        m->scratch.server = m->ends[1][i];
        if (rtls_step(&m->scratch, &moved) != RUSTLS_RESULT_OK)
            return 0;
        /* Established once neither side is handshaking and nothing more moves (TLS 1.3: after the client has
         * the server's last flight). */
        m->established[i] = !moved && !rustls_connection_is_handshaking(m->ends[0][i])
                            && !rustls_connection_is_handshaking(m->ends[1][i]);
    }
    *done = m->established[i];
    return 1;
}

static void free_end(void *p, long i, int server)
{
    rustls_memory *m = p;
    rustls_connection_free(m->ends[server][i]);
    m->ends[server][i] = NULL;
}

static void close_case(void *p)
{
    rustls_memory *m = p;
    free(m->scratch.to_server.data);
    free(m->scratch.to_client.data);
    free(m->established);
    free(m->ends[0]);
    free(m->ends[1]);
    rustls_client_config_free(m->client_config);
    rustls_server_config_free(m->server_config);
    free(m);
}

const sp_memory_backend SP_MEMORY = {
    "configs", open_case, make_configs, close_case,
    {.max_rounds = 64, .transports = transports, .make = make_pair, .step = step, .free_end = free_end},
};
