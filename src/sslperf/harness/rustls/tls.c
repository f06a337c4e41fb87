/* TLS through rustls-ffi, in memory: client and server in one process,
 * each connection's records carried by two byte pipes.
 *
 *   tls/handshake/PROTO/GROUP/CERT/CTX    CTX: shared (one client config) or
 *                                         new (a client config, root store and
 *                                         verifier made per connection)
 *   tls/resume/PROTO/HOW/GROUP/CERT       HOW: ticket (TLS 1.3) | session-id (TLS 1.2)
 *   tls/transfer/PROTO/SUITE/SIZE         bulk transfer after one handshake (transfer.c)
 *
 * The names, and what one operation is, are those of the OpenSSL backend
 * (openssl/tls.c): one complete handshake with the client verifying the
 * server's chain against a CA file of ~150 certificates, connection set-up
 * and free included, client and server CPU apart. The certificates are the
 * OpenSSL backend's (`harness pem-certs`, SSLPERF_TLS_PEM_DIR), so every
 * library verifies the same chain. Full handshakes leave nothing to resume
 * (the server stores no session and sends no ticket), as rustls' own
 * benchmarks do: rustls-ffi cannot turn a client's resumption off. rustls-ffi
 * cannot choose a key-exchange group either; a case whose group is not the
 * one the build negotiates is n/a and says which one it is. A `default`
 * group takes whatever the provider's defaults agree on (its suites too).
 * What the checked handshake negotiated (the resumed one's, for resumption)
 * is recorded, with each side's bytes (pair.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "harness.h"
#include "rustls_cases.h"
#include "tls_names.h"

#define HANDSHAKE_ROUNDS 16
#define SPLIT_EVERY 8      /* handshakes per one whose client and server sides are timed apart */

struct handshake_state {
    rtls_config cfg;
    const struct rustls_server_config *server;
    const struct rustls_client_config *client;    /* NULL: a new one per connection */
    rtls_pair pair;
    uint64_t ops, batch_ns;    /* handshakes and their batches' whole CPU time, since the last split */
};

static int handshake(struct handshake_state *s, prep_result *res)
{
    const struct rustls_client_config *client = s->client;
    if (!client) {
        uint64_t t0 = rtls_now(&s->pair);
        client = rtls_client_config(&s->cfg, res ? res : &(prep_result){0});
        s->pair.client_ns += rtls_now(&s->pair) - t0;
        if (!client)
            return 0;
    }
    int ok = rtls_connect(&s->pair, client, s->server, res ? res : &(prep_result){0})
             && rtls_exchange(&s->pair, HANDSHAKE_ROUNDS, res);
    if (ok && !s->client)
        rtls_close(&s->pair);     /* before its config goes */
    if (!s->client) {
        uint64_t t0 = rtls_now(&s->pair);
        rustls_client_config_free(client);
        s->pair.client_ns += rtls_now(&s->pair) - t0;
    }
    return ok;
}

static int run_handshakes(void *p, uint64_t iters)
{
    struct handshake_state *s = p;
    uint64_t start = sp_now_ns(SP_THREAD_CPU);
    for (uint64_t i = 0; i < iters; i++) {
        s->pair.timed = (s->ops + i) % SPLIT_EVERY == 0;
        int ok = handshake(s, NULL);
        if (s->pair.client)
            rtls_close(&s->pair);
        if (!ok)
            return 0;
    }
    s->pair.timed = 0;
    s->ops += iters;
    s->batch_ns += sp_now_ns(SP_THREAD_CPU) - start;
    return 1;
}

/* The batches' CPU time, divided between the sides as the handshakes timed side by side divide theirs. */
static void split_times(void *p, uint64_t *client, uint64_t *server)
{
    struct handshake_state *s = p;
    sp_sampled_split split = {s->pair.client_ns, s->pair.server_ns, s->ops, s->batch_ns};
    sp_split_sampled(&split, client, server);
    s->pair.client_ns = s->pair.server_ns = s->ops = s->batch_ns = 0;
}

/* Another thread's state on the same configs (rustls' configs are shared between threads as they are), with
 * connections, pipes and counters of its own. */
static void *share_handshakes(const void *p)
{
    struct handshake_state *copy = malloc(sizeof(*copy));
    if (copy) {
        *copy = *(const struct handshake_state *)p;
        memset(&copy->pair, 0, sizeof(copy->pair));
        copy->ops = copy->batch_ns = 0;
    }
    return copy;
}

static void release_shared(void *p)
{
    struct handshake_state *s = p;
    if (s->pair.client)
        rtls_close(&s->pair);
    rtls_pipes_free(&s->pair);
    free(s);
}

static void release_handshakes(void *p)
{
    struct handshake_state *s = p;
    if (s->pair.client)
        rtls_close(&s->pair);
    rtls_pipes_free(&s->pair);
    rustls_client_config_free(s->client);
    rustls_server_config_free(s->server);
    free(s);
}

/* One handshake kept, checked and recorded in `out`; n/a when the build negotiates another group than the case's. */
static prep_status check_first(struct handshake_state *s, int expect_resumed, prep_result *res, bench_case *out)
{
    char problem[200];
    rtls_watch watch;
    rtls_watch_start(&watch, &out->negotiated);
    s->pair.watch = &watch;
    int ok = handshake(s, res);
    s->pair.watch = NULL;
    if (!ok) {
        if (s->pair.client)
            rtls_close(&s->pair);
        return res->status;
    }
    rtls_watch_end(&watch, s->pair.client);
    rtls_check(&s->cfg, &s->pair, expect_resumed, problem, sizeof(problem), out->checked, sizeof(out->checked));
    rtls_close(&s->pair);
    if (strncmp(problem, "group:", 6) == 0) {
        rtls_group_na(&s->cfg, problem + 6, res);
        return PREP_NA;
    }
    if (problem[0])
        return prep_error(res, "%s", problem);
    return PREP_OK;
}

prep_status prepare_tls(const case_name *name, bench_case *out, prep_result *res)
{
    if (name->n >= 2 && strcmp(name->part[1], "transfer") == 0)
        return prepare_rustls_transfer(name, out, res);
    struct handshake_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    prep_status status = rtls_parse(name, &s->cfg, res);
    if (status == PREP_OK)
        status = rtls_make_configs(&s->cfg, &s->server, &s->client, res);
    if (status == PREP_OK && s->cfg.tls.new_ctx) {
        /* Check what the handshake negotiates on a shared config of the same settings. */
        const struct rustls_client_config *probe = rtls_client_config(&s->cfg, res);
        status = probe ? PREP_OK : res->status;
        s->client = probe;
        if (status == PREP_OK)
            status = check_first(s, 0, res, out);
        rustls_client_config_free(probe);
        s->client = NULL;
    } else if (status == PREP_OK) {
        status = check_first(s, 0, res, out);
        if (status == PREP_OK && s->cfg.tls.resume)
            status = check_first(s, 1, res, out);   /* now resuming: check that it does, and record what it did */
    }
    if (sp_take(status, out, s, release_handshakes, UNIT_OPS, 0) != PREP_OK)
        return status;
    s->pair.client_ns = s->pair.server_ns = s->ops = s->batch_ns = 0;
    out->run = run_handshakes;
    out->split = split_times;
    out->share = share_handshakes;
    out->release_share = release_shared;
    snprintf(out->note, sizeof(out->note), "client verifies a %s chain against a CA file of ~150 certificates%s",
             SP_TLS_CERTS[s->cfg.tls.cert].name,
             s->cfg.tls.resume ? "" : "; the server keeps no session and sends no ticket");
    return PREP_OK;
}
