/* Memory per connection, the part no library's API is in (see memory.h): the bytes counted, the lockstep of
 * handshakes, the reply, and the `memory` command around a backend's SP_MEMORY.
 *
 * Bytes are the library's allocator hooks' count where the backend installed them, else the C allocator's
 * statistics (glibc mallinfo2: bytes in use, the peak sampled after each round); the reply says which. What a
 * backend makes before the baseline (transports) outlives the connections and is not counted: only what making
 * the connections and their handshakes add. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "harness.h"
#include "memory.h"
#include "tls_names.h"

#define MAX_CONNECTIONS 100000

/* ---- counting ---------------------------------------------------------------- */

static size_t live_bytes, peak_bytes;
static const char *hooks_method;     /* set once hooks count; else glibc's statistics */

typedef struct {
    size_t size;
    size_t pad;                      /* keeps what follows 16-byte aligned */
} block_header;

static void note(size_t added, size_t removed)
{
    live_bytes = live_bytes + added - removed;
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
}

void *sp_counted_malloc(size_t n)
{
    block_header *h = malloc(sizeof(*h) + n);
    if (!h)
        return NULL;
    h->size = n;
    note(n, 0);
    return h + 1;
}

void *sp_counted_realloc(void *p, size_t n)
{
    if (!p)
        return sp_counted_malloc(n);
    block_header *old = (block_header *)p - 1, *h;
    size_t before = old->size;
    if (!(h = realloc(old, sizeof(*h) + n)))
        return NULL;
    h->size = n;
    note(n, before);
    return h + 1;
}

void sp_counted_free(void *p)
{
    if (!p)
        return;
    block_header *h = (block_header *)p - 1;
    note(0, h->size);
    free(h);
}

void sp_memory_hooked(const char *method)
{
    hooks_method = method;
}

static size_t in_use(void)
{
    if (hooks_method)
        return live_bytes;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
#else
    struct mallinfo info = mallinfo();      /* int fields: right up to 2 GiB */
#endif
    return (size_t)info.uordblks + (size_t)info.hblkhd;
}

/* Takes the bytes in use now into the peak (hooks see every allocation; the C allocator's statistics do not). */
static void sample_peak(void)
{
    size_t now = in_use();
    if (now > peak_bytes)
        peak_bytes = now;
}

/* ---- the lockstep ------------------------------------------------------------- */

/* Every unfinished client's (or server's) step; 1 and how many have finished, or 0. */
static int step_all(const sp_lockstep *l, void *state, long n, int server, char *done, long *finished, char *why,
                    size_t why_len)
{
    *finished = 0;
    for (long i = 0; i < n; i++) {
        int d = done[i];
        if (!d && !l->step(state, i, server, &d, why, why_len))
            return 0;
        done[i] = (char)d;
        *finished += d;
    }
    return 1;
}

static int handshake_all(const sp_lockstep *l, void *state, long n, char *client_done, char *server_done, char *why,
                         size_t why_len)
{
    uint64_t deadline = sp_now_ns(SP_WALL) + (uint64_t)l->deadline_s * 1000000000ull;
    long established = 0, clients, servers;
    for (int round = 0; established < n && (!l->max_rounds || round < l->max_rounds); round++) {
        if (!step_all(l, state, n, 0, client_done, &clients, why, why_len))
            return 0;
        if (l->between)
            l->between(state);
        if (!step_all(l, state, n, 1, server_done, &servers, why, why_len))
            return 0;
        sample_peak();
        established = clients < servers ? clients : servers;
        if (established < n && l->deadline_s && sp_now_ns(SP_WALL) > deadline) {
            snprintf(why, why_len, "%ld of %ld connections established after %u s", established, n, l->deadline_s);
            return 0;
        }
        if (established < n && l->wait)
            l->wait(state);
    }
    return established == n;
}

static void reply(const char *case_id, long n, const size_t bytes[4], const char *checked,
                  const sp_negotiated *negotiated)
{
    size_t baseline = bytes[0], all = bytes[1], without_servers = bytes[2], without_clients = bytes[3];
    printf("{\"type\":\"memory\",\"case\":");
    json_string(case_id);
    printf(",\"connections\":%ld,\"method\":\"%s\",\"baseline\":%zu,\"established\":%zu,\"peak\":%zu,"
           "\"server_bytes\":%zu,\"client_bytes\":%zu", n,
           hooks_method ? hooks_method : "C allocator statistics (mallinfo2)", baseline, all, peak_bytes,
           all - without_servers, without_servers - without_clients);
    if (checked && *checked) {
        printf(",\"checked\":");
        json_string(checked);
    }
    json_negotiated(negotiated);
    printf("}\n");
}

int sp_memory_measure(const sp_lockstep *l, void *state, const char *case_id, long n)
{
    char why[REASON_MAX] = "", checked[REASON_MAX] = "";
    sp_negotiated negotiated = {0};      /* on the stack: outside what is counted */
    char *client_done = calloc((size_t)n, 1), *server_done = calloc((size_t)n, 1);
    int made = client_done && server_done && l->transports(state, n, why, sizeof(why)), ok = made;
    size_t bytes[4];                 /* the baseline, established, without the servers, without the clients */
    bytes[0] = peak_bytes = in_use();
    for (long i = 0; ok && i < n; i++)
        ok = l->make(state, i, why, sizeof(why));
    ok = ok && handshake_all(l, state, n, client_done, server_done, why, sizeof(why));
    ok = ok && (!l->settle || l->settle(state, n, checked, sizeof(checked), why, sizeof(why)));
    if (ok && l->negotiated)
        l->negotiated(state, &negotiated);
    sample_peak();
    bytes[1] = in_use();
    for (int server = 1; server >= 0; server--) {     /* the servers first: each side is what its freeing gives back */
        for (long i = 0; made && i < n; i++)
            l->free_end(state, i, server);
        bytes[3 - server] = in_use();
    }
    if (ok)
        reply(case_id, n, bytes, checked, &negotiated);
    free(client_done);
    free(server_done);
    return ok ? 0 : json_refusal("error", case_id, why[0] ? why : "a handshake failed");
}

/* ---- the command ------------------------------------------------------------- */

int sp_memory_mode(int argc, char **argv)
{
    (void)argc;
    const char *case_id = argv[0];
    long n = atol(argv[1]);
    case_name name;
    sp_tls_case shape;
    prep_result res = {0};
    char refusal[REASON_MAX];
    if (n < 1 || n > MAX_CONNECTIONS)
        return json_refusal("error", case_id, "the number of connections must be 1 to 100000");
    void *state = sp_split_name(case_id, &name) ? SP_MEMORY.open(&name, &res) : NULL;
    if (!state || sp_tls_parse(&name, &shape, &res) != PREP_OK || shape.resume || shape.new_ctx) {
        snprintf(refusal, sizeof(refusal), "memory is measured on full handshakes with shared %s: "
                 "tls/handshake/PROTO/GROUP/CERT/shared", SP_MEMORY.contexts);
        if (state)
            SP_MEMORY.close(state);
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason[0] ? res.reason : refusal);
    }
    int rc = SP_MEMORY.make_contexts(state, &res) == PREP_OK
                 ? sp_memory_measure(&SP_MEMORY.lockstep, state, case_id, n)
                 : json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason);
    SP_MEMORY.close(state);
    return rc;
}
