/* Any case across threads, all running it together for MS milliseconds
 * once every one is ready, as OpenSSL's perftools run each test with 1…64
 * threads. The one thread runner of the harness.
 *
 *   harness threads CASE THREADS MS [own|libctx|shared]
 *
 * SSLPERF_THREAD_CPUS=0,1,2,… pins thread i to the i-th CPU of the list (round robin when there are more threads
 * than CPUs): one thread per CPU, so a thread that migrates cannot make one count's rate differ from the next.
 *
 * own:    each thread prepares the case itself (its own keys, contexts and
 *         buffers; for handshakes its own SSL_CTX pair), the library's global
 *         state — provider and method stores, locks — shared.
 * libctx: each thread also makes its own OSSL_LIB_CTX and sets it as the
 *         thread's default (OpenSSL 3.0+), perftools' -l: no method store
 *         shared between threads.
 * shared: the case is prepared once and every thread runs on its contexts
 *         (TLS handshakes: one SSL_CTX pair for all, what a server does).
 *
 * In every mode the case is prepared once on the calling thread before any
 * other starts: that is the capability check (an n/a is answered there or
 * never) and it does the backends' one-time set-up (e.g. the roots file,
 * sp_roots_file) while one thread runs. A thread that then fails to prepare
 * or run it is an error, with its reason, whatever status it gave. */
#define _GNU_SOURCE                 /* pthread_setaffinity_np */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "backend.h"
#include "harness.h"

#define BATCH_NS 1000000ull        /* about 1 ms of work between looks at the stop flag */
/* A test's hook: the thread of this number (1 to N) answers n/a while preparing, as a race once made one do. */
#define FORCE_NA_VARIABLE "SSLPERF_THREADS_TEST_NA_IN_THREAD"

static const char *const MODES[] = {"own", "libctx", "shared"};
/* The modes results are named with: these, and `clients` (loopback GETs from N client threads at once against one
 * server: loopback.c's sp_https_get_clients), which is not this runner's. */
static const char *const ID_MODES[] = {"own", "libctx", "shared", "clients"};
enum { OWN, LIBCTX, SHARED };

typedef struct {
    const char *id;
    int mode, index;
    const bench_case *shared;      /* SHARED: the case prepared once, before the threads */
    pthread_mutex_t *lock;
    pthread_cond_t *changed;
    int *ready, *go;
    volatile int *stop;
    uint64_t ops;
    prep_status status;
    char reason[REASON_MAX];
    size_t bytes_per_op;
    uint64_t op_ns[SP_LATENCY_KEEP];   /* a uniform sample of its operations' wall times, where the case keeps them */
    size_t op_n;
    uint64_t wait_ns;                  /* its run-queue wait while it ran: preempted, not blocked on a lock */
    long preemptions;                  /* times another task took its CPU (involuntary switches); -1: unknown */
    int scheduled;                     /* the kernel said (sp_sched_now) */
} thread_work;

/* The calling thread's involuntary context switches so far (-1 where the kernel does not count them per thread). */
static long involuntary_switches(void)
{
#ifdef RUSAGE_THREAD
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) == 0)
        return usage.ru_nivcsw;
#endif
    return -1;
}

/* The thread's case: prepared by the thread itself, or (shared) a state of its own on the contexts of the
 * case prepared once. */
static prep_status thread_case(const thread_work *w, bench_case *c, prep_result *res)
{
    if (w->mode != SHARED)
        return prepare_into(w->id, c, res);
    *c = *w->shared;
    c->release = c->release_share ? c->release_share : free;
    c->state = c->share(w->shared->state);
    return c->state ? PREP_OK : prep_error(res, "out of memory");
}

static void *worker_main(void *p)
{
    thread_work *w = p;
    bench_case c;
    prep_result res;
    uint64_t batch = 1;
    memset(&c, 0, sizeof(c));
    memset(&res, 0, sizeof(res));
    void *own = w->mode == LIBCTX ? sp_backend_thread_context() : NULL;
    const char *force_na = getenv(FORCE_NA_VARIABLE);
    if (w->mode == LIBCTX && !own)
        prep_error(&res, "cannot make a library context for the thread");
    else if (force_na && atoi(force_na) == w->index + 1)
        prep_na(&res, "n/a forced in thread %d by %s", w->index + 1, FORCE_NA_VARIABLE);
    else
        thread_case(w, &c, &res);
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
    sp_latencies *latencies = w->status == PREP_OK && c.latencies ? c.latencies(c.state) : NULL;
    if (latencies)
        sp_latency_reset(latencies);           /* calibration's are not the run's */
    sp_sched before, after;
    long switched = involuntary_switches();
    w->scheduled = sp_sched_now(&before);
    while (w->status == PREP_OK && !*w->stop) {
        if (!c.run(c.state, batch)) {
            w->status = PREP_ERROR;
            snprintf(w->reason, sizeof(w->reason), "an operation failed while running");
            break;
        }
        w->ops += batch;
    }
    w->scheduled &= sp_sched_now(&after);
    w->wait_ns = after.wait_ns - before.wait_ns;
    w->preemptions = switched < 0 ? -1 : involuntary_switches() - switched;
    /* A thread that slept on a lock waits again for its CPU once woken (an idle CPU's wake-up, tens of µs on a
     * VM, thousands of times a second behind a contended lock): that is the lock's cost, not another task's
     * share. Only a thread that another task took off its CPU at least once waited for the CPU. */
    if (w->preemptions == 0)
        w->wait_ns = 0;
    for (size_t k = 0; latencies && k < latencies->n; k++)
        w->op_ns[w->op_n++] = latencies->ns[k];
    if (c.release && c.state)
        c.release(c.state);
    if (own)
        sp_backend_thread_context_free(own);
    return NULL;
}

/* `harness list`: a result of CASE run in N threads is named after it, with N as its size. */
void list_threads(void)
{
    static const id_template IDS[] = {{"threads/{mode}/{size:03}/{case...}", NULL, "{case}", "{size} threads"}};
    printf("\"threads\":{");
    json_ids(SP_IDS(IDS));
    json_names("modes", SP_ROWS(ID_MODES));
    putchar('}');
}

/* The case prepared once on this thread, before any other starts: the capability check, so that an n/a comes
 * from here and from no thread, and the backends' one-time set-up done single-threaded. LIBCTX prepares it in a
 * library context of its own, as each thread will. SHARED keeps it in `c` (if its contexts can be shared); the
 * other modes release it. 0 when the threads may start, else the refusal's exit code. */
static int check_before_threads(const char *id, int mode, bench_case *c)
{
    prep_result res;
    memset(&res, 0, sizeof(res));
    void *own = mode == LIBCTX ? sp_backend_thread_context() : NULL;
    if (mode == LIBCTX && !own)
        return json_refusal("error", id, "cannot make a library context for the thread");
    prep_status status = prepare_into(id, c, &res);
    int keep = status == PREP_OK && mode == SHARED && c->share;
    if (status == PREP_OK && !keep && c->release)
        c->release(c->state);
    if (!keep)
        memset(c, 0, sizeof(*c));
    if (own)
        sp_backend_thread_context_free(own);
    if (status != PREP_OK)
        return json_refusal(status == PREP_NA ? "na" : "error", id, res.reason);
    if (mode == SHARED && !keep)
        return json_refusal("na", id, "only TLS handshakes share their contexts (one client and one server context) "
                                      "between threads; use own or libctx");
    return 0;
}

/* A thread that did not prepare or run the case, after the check before the threads prepared it: an error
 * (never n/a: a case the library cannot run was refused before), naming the thread and how many failed. */
static int thread_failure(const char *id, const thread_work *work, int n)
{
    const thread_work *first = NULL;
    int failed = 0;
    char reason[REASON_MAX + 128];      /* the thread's reason whole, after ours */
    for (int i = 0; i < n; i++)
        if (work[i].status != PREP_OK) {
            failed++;
            first = first ? first : &work[i];
        }
    if (!first)
        return 0;
    snprintf(reason, sizeof(reason), "thread %d of %d failed (%d in all), though the case prepared before the "
             "threads started: %s%s", first->index + 1, n, failed, first->status == PREP_NA ? "(n/a) " : "",
             first->reason);
    return json_refusal("error", id, reason);
}

/* The CPUs of SSLPERF_THREAD_CPUS (at most `max`), how many; 0 when unset or unreadable (threads float). */
static int thread_cpus(int *cpus, int max)
{
    const char *list = getenv("SSLPERF_THREAD_CPUS");
    int n = 0;
    for (const char *p = list; p && *p && n < max;) {
        char *end;
        long cpu = strtol(p, &end, 10);
        if (end == p || cpu < 0 || cpu >= CPU_SETSIZE)
            return 0;
        cpus[n++] = (int)cpu;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return n;
}

static void pin_thread(pthread_t thread, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(thread, sizeof(set), &set);
}

int threads_run(int argc, char **argv)
{
    const char *id = argv[0];
    int n = atoi(argv[1]), ms = atoi(argv[2]);
    int mode = argc > 3 ? sp_find(argv[3], SP_ROWS(MODES)) : OWN;
    bench_case shared;
    memset(&shared, 0, sizeof(shared));
    if (n < 1 || n > 256 || ms < 1 || mode < 0)
        return json_refusal("error", id, "usage: threads CASE THREADS(1-256) MS [own|libctx|shared]");
    const char *no_context = mode == LIBCTX ? sp_backend_no_thread_context() : NULL;
    if (no_context)
        return json_refusal("na", id, no_context);
    if (check_before_threads(id, mode, &shared) != 0)
        return 1;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
    int ready = 0, go = 0, started = 0;
    volatile int stop = 0;
    thread_work *work = calloc((size_t)n, sizeof(*work));
    pthread_t *ids = calloc((size_t)n, sizeof(*ids));
    if (!work || !ids) {
        free(work);
        free(ids);
        if (shared.release)
            shared.release(shared.state);
        return json_refusal("error", id, "out of memory");
    }
    for (int i = 0; i < n; i++)
        work[i] = (thread_work){id, mode, i, &shared, &lock, &changed, &ready, &go, &stop, 0, PREP_OK, "", 0, {0}, 0};
    int cpus[CPU_SETSIZE < 1024 ? CPU_SETSIZE : 1024];
    int pinned = thread_cpus(cpus, (int)(sizeof(cpus) / sizeof(cpus[0])));
    for (; started < n; started++) {
        if (pthread_create(&ids[started], NULL, worker_main, &work[started]) != 0)
            break;
        if (pinned)          /* before it calibrates: the thread waits for `go` on the lock below */
            pin_thread(ids[started], cpus[started % pinned]);
    }
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
    int rc = started < n ? json_refusal("error", id, "cannot start that many threads") : thread_failure(id, work, n);
    if (rc == 0) {
        printf("{\"type\":\"threads\",\"case\":");
        json_string(id);
        printf(",\"threads\":%d,\"mode\":\"%s\",\"pinned\":%s,\"wall_ns\":%llu,\"bytes_per_op\":%zu,\"ops\":[",
               n, MODES[mode], pinned ? "true" : "false", (unsigned long long)(t1 - t0), work[0].bytes_per_op);
        for (int i = 0; i < n; i++)
            printf(i ? ",%llu" : "%llu", (unsigned long long)work[i].ops);
        printf("]");
        int scheduled = 1;
        for (int i = 0; i < n; i++)
            scheduled &= work[i].scheduled;
        if (scheduled) {
            printf(",\"wait_ns\":[");
            for (int i = 0; i < n; i++)
                printf(i ? ",%llu" : "%llu", (unsigned long long)work[i].wait_ns);
            printf("]");
        }
        if (work[0].op_n) {
            printf(",\"op_wall_ns\":[");
            for (int i = 0, first = 1; i < n; i++)
                for (size_t k = 0; k < work[i].op_n; k++, first = 0)
                    printf(first ? "%llu" : ",%llu", (unsigned long long)work[i].op_ns[k]);
            printf("]");
        }
        printf("}\n");
    }
    if (shared.release)
        shared.release(shared.state);
    free(work);
    free(ids);
    return rc;
}
