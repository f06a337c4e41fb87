/* sslperf lock statistics: a small LD_PRELOAD library that stands between a program and glibc's pthread
 * mutex, rwlock and condition-variable calls and records, per call site, how often a thread found the lock taken
 * and how long it was blocked. The harness links the crypto library statically but libc dynamically, so the
 * library's own locking (OpenSSL's CRYPTO_THREAD_write_lock → pthread_rwlock_wrlock, …) passes through here for
 * every backend.
 *
 * An uncontended lock costs one try-lock and a counter; only a lock that is taken is timed and its call stack
 * recorded (backtrace(3), which unwinds through code built without frame pointers). At exit the sites are
 * written as JSON to $SSLPERF_LOCKSTAT_OUT: per site its kind, count, blocked nanoseconds and frames, each frame
 * the module it is in and its offset there (sslperf symbolises them against the harness binary).
 *
 *   cc -shared -fPIC -O2 -o lockstat.so lockstat.c -ldl -lpthread
 *   SSLPERF_LOCKSTAT_OUT=sites.json LD_PRELOAD=./lockstat.so harness threads CASE 16 2000 own */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 8              /* frames kept per site: the lock call, its callers up to the library's entry */
#define SKIP 2               /* this library's own frames (record, the wrapper) */
#define SITES 4096           /* open-addressed table; a run has tens of sites */

enum kind { MUTEX, RDLOCK, WRLOCK, CONDWAIT, KINDS };
static const char *const KIND_NAMES[KINDS] = {"pthread_mutex_lock", "pthread_rwlock_rdlock",
                                              "pthread_rwlock_wrlock", "pthread_cond_wait"};

typedef struct {
    _Atomic uint64_t hash;          /* 0: free */
    int kind, depth;
    void *frames[DEPTH];
    _Atomic uint64_t count, blocked_ns, max_ns;
} site;

static site sites[SITES];
static _Atomic uint64_t calls[KINDS], contended[KINDS], dropped;
static _Atomic int table_lock;
static __thread int inside;         /* backtrace() may lock: never record from within a record */

static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_rdlock)(pthread_rwlock_t *);
static int (*real_wrlock)(pthread_rwlock_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void resolve(void)
{
    real_mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_rdlock = dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    real_wrlock = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
    real_cond_wait = dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2");
    real_cond_timedwait = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
    if (!real_cond_wait)
        real_cond_wait = dlsym(RTLD_NEXT, "pthread_cond_wait");
    if (!real_cond_timedwait)
        real_cond_timedwait = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
}

static uint64_t hash_of(int kind, void *const *frames, int depth)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;
    for (int i = 0; i < depth; i++)
        h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* One blocked acquisition of `kind` that took `ns`, at the caller's call stack. */
__attribute__((noinline)) static void record(int kind, uint64_t ns)
{
    if (inside)
        return;
    inside = 1;
    void *frames[DEPTH + SKIP];
    int got = backtrace(frames, DEPTH + SKIP) - SKIP;
    int depth = got < 0 ? 0 : got;
    uint64_t h = hash_of(kind, frames + SKIP, depth);
    site *s = NULL;
    for (size_t i = h % SITES, probes = 0; probes < SITES; i = (i + 1) % SITES, probes++) {
        uint64_t seen = atomic_load(&sites[i].hash);
        if (seen == h) {
            s = &sites[i];
            break;
        }
        if (seen == 0) {
            while (atomic_exchange(&table_lock, 1))    /* a new site: claimed under a spin lock (rare) */
                ;
            if (atomic_load(&sites[i].hash) == 0) {
                sites[i].kind = kind;
                sites[i].depth = depth;
                memcpy(sites[i].frames, frames + SKIP, sizeof(void *) * (size_t)depth);
                atomic_store(&sites[i].hash, h);
            }
            atomic_store(&table_lock, 0);
            if (atomic_load(&sites[i].hash) == h) {
                s = &sites[i];
                break;
            }
        }
    }
    if (s) {
        atomic_fetch_add(&s->count, 1);
        atomic_fetch_add(&s->blocked_ns, ns);
        for (uint64_t max = atomic_load(&s->max_ns); ns > max && !atomic_compare_exchange_weak(&s->max_ns, &max, ns);)
            ;
    } else {
        atomic_fetch_add(&dropped, 1);
    }
    inside = 0;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!real_mutex_lock)
        resolve();
    atomic_fetch_add_explicit(&calls[MUTEX], 1, memory_order_relaxed);
    if (pthread_mutex_trylock(m) == 0)
        return 0;
    atomic_fetch_add_explicit(&contended[MUTEX], 1, memory_order_relaxed);
    uint64_t t0 = now_ns();
    int rc = real_mutex_lock(m);
    record(MUTEX, now_ns() - t0);
    return rc;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    if (!real_rdlock)
        resolve();
    atomic_fetch_add_explicit(&calls[RDLOCK], 1, memory_order_relaxed);
    if (pthread_rwlock_tryrdlock(l) == 0)
        return 0;
    atomic_fetch_add_explicit(&contended[RDLOCK], 1, memory_order_relaxed);
    uint64_t t0 = now_ns();
    int rc = real_rdlock(l);
    record(RDLOCK, now_ns() - t0);
    return rc;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    if (!real_wrlock)
        resolve();
    atomic_fetch_add_explicit(&calls[WRLOCK], 1, memory_order_relaxed);
    if (pthread_rwlock_trywrlock(l) == 0)
        return 0;
    atomic_fetch_add_explicit(&contended[WRLOCK], 1, memory_order_relaxed);
    uint64_t t0 = now_ns();
    int rc = real_wrlock(l);
    record(WRLOCK, now_ns() - t0);
    return rc;
}

/* A condition wait always blocks: it is waiting, not contention, and is kept apart (the harness's own start
 * barrier waits here; sslperf leaves its sites out). */
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (!real_cond_wait)
        resolve();
    atomic_fetch_add_explicit(&calls[CONDWAIT], 1, memory_order_relaxed);
    uint64_t t0 = now_ns();
    int rc = real_cond_wait(c, m);
    record(CONDWAIT, now_ns() - t0);
    return rc;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *at)
{
    if (!real_cond_timedwait)
        resolve();
    atomic_fetch_add_explicit(&calls[CONDWAIT], 1, memory_order_relaxed);
    uint64_t t0 = now_ns();
    int rc = real_cond_timedwait(c, m, at);
    record(CONDWAIT, now_ns() - t0);
    return rc;
}

static void print_frame(FILE *out, void *address)
{
    Dl_info info;
    if (dladdr(address, &info) && info.dli_fname) {
        fprintf(out, "{\"module\":\"");
        for (const char *p = info.dli_fname; *p; p++)
            fputc(*p == '"' || *p == '\\' ? '_' : *p, out);
        fprintf(out, "\",\"offset\":%llu", (unsigned long long)((uintptr_t)address - (uintptr_t)info.dli_fbase));
        if (info.dli_sname)
            fprintf(out, ",\"symbol\":\"%s\"", info.dli_sname);
        fputc('}', out);
    } else {
        fprintf(out, "{\"module\":\"?\",\"offset\":%llu}", (unsigned long long)(uintptr_t)address);
    }
}

__attribute__((destructor)) static void write_sites(void)
{
    const char *path = getenv("SSLPERF_LOCKSTAT_OUT");
    if (!path)
        return;
    inside = 1;
    FILE *out = fopen(path, "w");
    if (!out)
        return;
    fprintf(out, "{\"calls\":{");
    for (int k = 0; k < KINDS; k++)
        fprintf(out, "%s\"%s\":[%llu,%llu]", k ? "," : "", KIND_NAMES[k], (unsigned long long)calls[k],
                (unsigned long long)contended[k]);
    fprintf(out, "},\"dropped\":%llu,\"sites\":[", (unsigned long long)dropped);
    int first = 1;
    for (size_t i = 0; i < SITES; i++) {
        const site *s = &sites[i];
        if (!atomic_load(&s->hash))
            continue;
        fprintf(out, "%s{\"kind\":\"%s\",\"count\":%llu,\"blocked_ns\":%llu,\"max_ns\":%llu,\"frames\":[",
                first ? "" : ",", KIND_NAMES[s->kind], (unsigned long long)s->count,
                (unsigned long long)s->blocked_ns, (unsigned long long)s->max_ns);
        for (int f = 0; f < s->depth; f++) {
            if (f)
                fputc(',', out);
            print_frame(out, s->frames[f]);
        }
        fprintf(out, "]}");
        first = 0;
    }
    fprintf(out, "]}\n");
    fclose(out);
}
