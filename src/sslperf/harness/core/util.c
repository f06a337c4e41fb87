/* Helpers shared by the family files: n/a and error results, sizes and
 * patterns, the one clock and calibration, named tables and the catalog's
 * JSON pieces. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "harness.h"

prep_status prep_na(prep_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
    sp_clear_errors();
    return res->status = PREP_NA;
}

prep_status prep_unknown(prep_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
    return res->status = PREP_UNKNOWN;
}

prep_status sp_take(prep_status status, bench_case *out, void *state, void (*release)(void *), unit_kind unit,
                    size_t bytes_per_op)
{
    if (status != PREP_OK) {
        release(state);
        return status;
    }
    out->unit = unit;
    out->bytes_per_op = bytes_per_op;
    out->state = state;
    out->release = release;
    return PREP_OK;
}

prep_status prep_error(prep_result *res, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
    sp_append_errors(res->reason, sizeof(res->reason));
    return res->status = PREP_ERROR;
}

int parse_size(const char *text, size_t *out)
{
    char *end = NULL;
    unsigned long long value;

    if (text == NULL || *text < '0' || *text > '9')
        return 0;
    value = strtoull(text, &end, 10);
    if (*end != '\0' || value == 0 || value > (1ULL << 26))
        return 0;
    *out = (size_t)value;
    return 1;
}

void fill_pattern(unsigned char *buf, size_t len, unsigned seed)
{
    /* Deterministic, not all-zero: some code paths special-case zeros. */
    unsigned state = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < len; i++) {
        state = state * 1103515245u + 12345u;
        buf[i] = (unsigned char)(state >> 16);
    }
}

int hex_equal(const unsigned char *bytes, size_t len, const char *hex)
{
    static const char digits[] = "0123456789abcdef";
    if (strlen(hex) != 2 * len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (hex[2 * i] != digits[bytes[i] >> 4] || hex[2 * i + 1] != digits[bytes[i] & 15])
            return 0;
    }
    return 1;
}

void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* ---- timing ---------------------------------------------------------------- */

uint64_t sp_now_ns(sp_clock clock)
{
    static const clockid_t ids[] = {CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
    struct timespec ts;
    clock_gettime(ids[clock], &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sp_timed_batch(batch_fn run, void *state, uint64_t iters, uint64_t *wall_ns, uint64_t *cpu_ns)
{
    uint64_t w0 = sp_now_ns(SP_WALL), c0 = sp_now_ns(SP_PROCESS_CPU);
    int ok = run(state, iters);
    *cpu_ns = sp_now_ns(SP_PROCESS_CPU) - c0;
    *wall_ns = sp_now_ns(SP_WALL) - w0;
    return ok;
}

int sp_sched_now(sp_sched *s)
{
    s->wait_ns = s->slices = 0;
#ifdef __linux__
    /* run time, run-queue wait, times put on a CPU: the kernel's own account of this thread (sched_info) */
    unsigned long long run = 0, wait = 0, slices = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    int ok = f && fscanf(f, "%llu %llu %llu", &run, &wait, &slices) == 3 && run > 0;
    if (f)
        fclose(f);
    if (ok) {
        s->wait_ns = wait;
        s->slices = slices;
    }
    return ok;
#else
    return 0;
#endif
}

void sp_latency_add(sp_latencies *l, uint64_t ns)
{
    l->seen++;
    if (l->n < SP_LATENCY_KEEP) {
        l->ns[l->n++] = ns;
        return;
    }
    if (!l->random)
        l->random = 0x9e3779b97f4a7c15ull;     /* xorshift64: any fixed seed will do, the choice only has to be blind */
    l->random ^= l->random << 13;
    l->random ^= l->random >> 7;
    l->random ^= l->random << 17;
    uint64_t slot = l->random % l->seen;
    if (slot < SP_LATENCY_KEEP)
        l->ns[slot] = ns;
}

void sp_latency_reset(sp_latencies *l)
{
    l->n = 0;
    l->seen = 0;
}

/* Growing from one iteration (x8 while a batch is under 1% of the probe,
 * then x2) doubles as a warm-up; the count is scaled from the last batch. */
int sp_calibrate(batch_fn run, void *state, uint64_t target_ns, uint64_t probe_ns, uint64_t *iters_out)
{
    /* A batch's wall time less what the thread waited for its CPU: on a CPU another task shares, the wall time
     * would size the samples to the share left (a tenth of the work beside a busy loop at nice 10), and samples
     * that short start cold after every turn of the other task. */
    uint64_t iters = 1, wall, cpu;
    for (;;) {
        sp_sched before, after;
        sp_sched_now(&before);
        if (!sp_timed_batch(run, state, iters, &wall, &cpu))
            return 0;
        sp_sched_now(&after);
        uint64_t waited = after.wait_ns - before.wait_ns;
        wall = waited < wall ? wall - waited : 1;
        if (wall >= probe_ns / 4 || iters >= (1ull << 40))
            break;
        iters *= (wall < probe_ns / 100) ? 8 : 2;
    }
    double scaled = (double)iters * (double)target_ns / (double)(wall ? wall : 1);
    *iters_out = scaled < 1 ? 1 : (uint64_t)(scaled + 0.5);
    return 1;
}

/* ---- named tables and the catalog ------------------------------------------ */

const char *const WORKLOADS[2] = {"record", "speed-compat"};

static const char *row_name(const void *rows, size_t stride, size_t i)
{
    return *(const char *const *)((const char *)rows + i * stride);
}

int sp_find(const char *name, const void *rows, size_t n, size_t stride)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(row_name(rows, stride, i), name) == 0)
            return (int)i;
    return -1;
}

const char *sp_join(char *buf, size_t len, const char *sep, const void *rows, size_t n, size_t stride)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? sep : "", row_name(rows, stride, i));
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

void json_names(const char *key, const void *rows, size_t n, size_t stride)
{
    putchar(',');
    json_string(key);
    printf(":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            putchar(',');
        json_string(row_name(rows, stride, i));
    }
    putchar(']');
}

void json_ids(const id_template *rows, size_t n)
{
    printf("\"ids\":[");
    for (size_t i = 0; i < n; i++) {
        const char *keys[] = {"id", "family", "algorithm", "operation"};
        const char *values[] = {rows[i].id, rows[i].family, rows[i].algorithm, rows[i].operation};
        putchar(i ? ',' : '{');
        if (i)
            putchar('{');
        for (size_t k = 0, shown = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            if (!values[k])
                continue;
            printf(shown++ ? ",\"%s\":" : "\"%s\":", keys[k]);
            json_string(values[k]);
        }
        putchar('}');
    }
    putchar(']');
}

void json_row(size_t i, const char *name, const char *needs)
{
    printf(i ? ",{\"name\":" : "{\"name\":");
    json_string(name);
    if (needs) {
        printf(",\"needs\":");
        json_string(needs);
    }
}

int json_refusal(const char *type, const char *case_id, const char *reason)
{
    printf("{\"type\":\"%s\",\"case\":", type);
    json_string(case_id);
    printf(",\"reason\":");
    json_string(reason);
    printf("}\n");
    return 1;
}

const char *sp_pem_dir(void)
{
    const char *dir = getenv("SSLPERF_TLS_PEM_DIR");
    return dir && *dir ? dir : NULL;
}

/* The roots file's path ("" when it cannot be made), made by make_roots_file once per process. */
static char roots_path[600];
static pthread_once_t roots_once = PTHREAD_ONCE_INIT;

static void make_roots_file(void)
{
    /* One file, made once per process in SSLPERF_CERT_DIR (private to the run): ca-bundle.pem's ~150 certificates
     * and the PEM directory's CA, as the OpenSSL backend's CA file. Built in a local buffer and published whole:
     * no caller sees a path before its file is complete. */
    char path[sizeof(roots_path)];
    const char *dir = getenv("SSLPERF_CERT_DIR");
    if (!dir || !*dir || !sp_pem_dir())
        return;
    int used = snprintf(path, sizeof(path), "%s/roots-", dir);
    if (used < 0 || (size_t)used + 7 > sizeof(path))
        return;
    memset(path + used, 'X', 6);          /* mkstemp's template: six letters it replaces */
    path[used + 6] = '\0';
    int fd = mkstemp(path);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    int ok = out != NULL;
    for (int i = 0; ok && i < 2; i++) {
        char source[600], buf[8192];
        size_t n;
        snprintf(source, sizeof(source), "%s/%s", i ? sp_pem_dir() : dir, i ? "ca.pem" : "ca-bundle.pem");
        FILE *in = fopen(source, "r");
        ok = in != NULL || i == 0;          /* the bundle may be missing; the CA may not */
        while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
            ok = ok && fwrite(buf, 1, n, out) == n;
        if (in)
            fclose(in);
    }
    if (out)
        ok = fclose(out) == 0 && ok;
    if (ok)
        memcpy(roots_path, path, sizeof(path));
}

const char *sp_roots_file(void)
{
    /* Once, whichever thread asks first: the threads runner's threads each load it while preparing. */
    pthread_once(&roots_once, make_roots_file);
    return roots_path[0] ? roots_path : NULL;
}

void sp_split_sampled(sp_sampled_split *s, uint64_t *a, uint64_t *b)
{
    uint64_t sampled = s->a_ns + s->b_ns;
    *a = sampled ? (uint64_t)((double)s->batch_ns * (double)s->a_ns / (double)sampled) : 0;
    *b = sampled ? s->batch_ns - *a : 0;
    memset(s, 0, sizeof(*s));
}
