/* Any case across threads: each thread prepares the case itself (its own
 * keys, contexts and buffers; the library's global state — provider and
 * method stores, locks — shared), then all run it together for MS
 * milliseconds, as OpenSSL's perftools run each test with 1…64 threads.
 *
 *   harness threads CASE THREADS MS [own|libctx]
 *
 * own:    the default library context, shared by all threads.
 * libctx: each thread also makes its own OSSL_LIB_CTX and sets it as the
 *         thread's default (OpenSSL 3.0+), perftools' -l: no method store
 *         shared between threads.
 * (TLS handshakes on one SSL_CTX shared by all threads: tls-threads.) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compat.h"
#include "harness.h"

#if SP_OSSL3
#include <openssl/crypto.h>
#endif

#define BATCH_NS 1000000ull        /* about 1 ms of work between looks at the stop flag */

typedef struct {
    const char *id;
    int libctx;
    pthread_mutex_t *lock;
    pthread_cond_t *changed;
    int *ready, *go;
    volatile int *stop;
    uint64_t ops;
    prep_status status;
    char reason[REASON_MAX];
    size_t bytes_per_op;
} thread_work;

static void *worker_main(void *p)
{
    thread_work *w = p;
    bench_case c;
    prep_result res;
    uint64_t batch = 1;
    memset(&c, 0, sizeof(c));
    memset(&res, 0, sizeof(res));
#if SP_OSSL3
    OSSL_LIB_CTX *own = w->libctx ? OSSL_LIB_CTX_new() : NULL;
    if (w->libctx && (!own || !OSSL_LIB_CTX_set0_default(own)))
        prep_error(&res, "cannot make a library context for the thread");
    else
#endif
        prepare_into(w->id, &c, &res);
    w->status = res.status;
    snprintf(w->reason, sizeof(w->reason), "%s", res.reason);
    if (w->status == PREP_OK) {
        w->bytes_per_op = c.unit == UNIT_BYTES ? c.bytes_per_op : 0;
        if (!sp_calibrate(c.run, c.state, BATCH_NS, BATCH_NS, &batch)) {
            w->status = PREP_ERROR;
            snprintf(w->reason, sizeof(w->reason), "the case failed while calibrating");
        }
    }
    pthread_mutex_lock(w->lock);
    (*w->ready)++;
    pthread_cond_broadcast(w->changed);
    while (!*w->go)
        pthread_cond_wait(w->changed, w->lock);
    pthread_mutex_unlock(w->lock);
    while (w->status == PREP_OK && !*w->stop) {
        if (!c.run(c.state, batch)) {
            w->status = PREP_ERROR;
            snprintf(w->reason, sizeof(w->reason), "an operation failed while running");
            break;
        }
        w->ops += batch;
    }
    if (c.release && c.state)
        c.release(c.state);
#if SP_OSSL3
    if (own) {
        OSSL_LIB_CTX_set0_default(NULL);
        OSSL_LIB_CTX_free(own);
    }
#endif
    return NULL;
}

int threads_run(int argc, char **argv)
{
    const char *id = argv[0];
    int n = atoi(argv[1]), ms = atoi(argv[2]);
    int libctx = argc > 3 && strcmp(argv[3], "libctx") == 0;
    if (n < 1 || n > 256 || ms < 1 || (argc > 3 && !libctx && strcmp(argv[3], "own") != 0))
        return json_refusal("error", id, "usage: threads CASE THREADS(1-256) MS [own|libctx]");
    if (libctx && !SP_OSSL3)
        return json_refusal("na", id, "a library context per thread needs OpenSSL 3.0 or later (OSSL_LIB_CTX)");
    if (libctx && sp_fips_active())     /* a fresh context would load the default provider, not the FIPS one */
        return json_refusal("na", id, "a library context per thread would not have the FIPS provider; use own");
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
    int ready = 0, go = 0, started = 0;
    volatile int stop = 0;
    thread_work *work = calloc((size_t)n, sizeof(*work));
    pthread_t *ids = calloc((size_t)n, sizeof(*ids));
    if (!work || !ids)
        return json_refusal("error", id, "out of memory");
    for (int i = 0; i < n; i++)
        work[i] = (thread_work){id, libctx, &lock, &changed, &ready, &go, &stop, 0, PREP_OK, "", 0};
    for (; started < n; started++)
        if (pthread_create(&ids[started], NULL, worker_main, &work[started]) != 0)
            break;
    pthread_mutex_lock(&lock);
    while (ready < started)                 /* every thread prepared and calibrated */
        pthread_cond_wait(&changed, &lock);
    go = 1;
    uint64_t t0 = sp_now_ns(SP_WALL);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    stop = 1;
    for (int i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    uint64_t t1 = sp_now_ns(SP_WALL);
    const thread_work *bad = NULL;
    for (int i = 0; i < started && !bad; i++)
        if (work[i].status != PREP_OK)
            bad = &work[i];
    int rc = 0;
    if (started < n)
        rc = json_refusal("error", id, "cannot start that many threads");
    else if (bad)
        rc = json_refusal(bad->status == PREP_NA ? "na" : "error", id, bad->reason);
    else {
        printf("{\"type\":\"threads\",\"case\":");
        json_string(id);
        printf(",\"threads\":%d,\"mode\":\"%s\",\"wall_ns\":%llu,\"bytes_per_op\":%zu,\"ops\":[", n,
               libctx ? "libctx" : "own", (unsigned long long)(t1 - t0), work[0].bytes_per_op);
        for (int i = 0; i < n; i++)
            printf(i ? ",%llu" : "%llu", (unsigned long long)work[i].ops);
        printf("]}\n");
    }
    free(work);
    free(ids);
    return rc;
}
