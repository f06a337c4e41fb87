/* sslperf harness: shared types.
 *
 * A case is named family/algorithm/operation[/size][/workload]. Each family
 * file offers a `prepare` function that parses the rest of the name, makes
 * keys, contexts and buffers (outside any timed region), checks the operation
 * once for correctness, and returns a bench_case whose `run` does `iters`
 * operations and nothing else. Each family's names live in its tables, which
 * are the same in every build (a library that lacks a row answers n/a) and
 * which `harness list` prints as the case catalog. */
#ifndef SSLPERF_HARNESS_H
#define SSLPERF_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#define CASE_ID_MAX 160
#define REASON_MAX 256

typedef enum { UNIT_BYTES, UNIT_OPS } unit_kind;

/* What a checked TLS connection negotiated, as its client saw it on the wire (IANA codepoints; core/wire.c reads
 * them from the handshake messages and records a backend's message callback hands it). SP_UNKNOWN where the
 * library cannot tell; 0 for a group or signature that the connection did not use (a resumption without key
 * exchange, or without a certificate). */
#define SP_UNKNOWN (-1)
typedef struct {
    int known;                          /* 1 once a connection was recorded */
    int32_t version;                    /* 0x0304 TLS 1.3, 0x0303 TLS 1.2, 0xfefc DTLS 1.3, 0xfefd DTLS 1.2 */
    int32_t group, suite, signature;    /* Supported Groups, Cipher Suites, SignatureScheme */
    int hello_retry;                    /* the server asked for another key share (1), not (0) */
    int64_t client_bytes, server_bytes; /* bytes each side sent for the connection's handshake (records, headers and
                                           all; with a TLS 1.3 server's tickets) */
} sp_negotiated;

/* `iters` operations and nothing else; 1 on success. */
typedef int (*batch_fn)(void *state, uint64_t iters);

typedef struct bench_case {
    char id[CASE_ID_MAX];
    unit_kind unit;
    size_t bytes_per_op;            /* for UNIT_BYTES */
    void *state;
    batch_fn run;
    void (*release)(void *state);   /* frees what prepare made; never given NULL */
    /* Optional: the client's and the server's CPU ns since the last call (TLS). */
    void (*split)(void *state, uint64_t *client_ns, uint64_t *server_ns);
    /* Optional (TLS handshakes): the record of each operation's wall time the state keeps (see sp_latencies). */
    struct sp_latencies *(*latencies)(void *state);
    /* Optional (TLS handshakes): a state for another thread that shares this one's contexts (the SSL_CTX
     * pair, the session) and keeps its own counters; freed with free() (`threads CASE N MS shared`). */
    void *(*share)(const void *state);
    void (*release_share)(void *state);   /* Optional: frees a shared state (else free()) */
    char note[REASON_MAX];          /* e.g. which API was used, when it differs by lib */
    char checked[REASON_MAX];       /* what the correctness check saw (TLS: version, cipher, group) */
    sp_negotiated negotiated;       /* TLS: what the checked connection negotiated (known == 0 elsewhere) */
} bench_case;

typedef enum { PREP_OK, PREP_NA, PREP_ERROR, PREP_UNKNOWN } prep_status;

/* Outcome of preparing a case: a ready case, n/a with a reason (the library
 * lacks the algorithm or API), an error (the library failed or a check did
 * not pass), or unknown (no family claims the name). */
typedef struct {
    prep_status status;
    char reason[REASON_MAX];
} prep_result;

/* Split name components: parts[0] is the family. */
#define MAX_PARTS 6
typedef struct {
    char buf[CASE_ID_MAX];
    const char *part[MAX_PARTS];
    int n;
} case_name;

/* `id` split at its slashes into `name`; 0 when it is too long or has too many parts (main.c). */
int sp_split_name(const char *id, case_name *name);

/* A family's prepare: on PREP_OK `out` is ready; on anything else it has
 * freed what it made and `res->reason` says why. */
typedef prep_status (*prepare_fn)(const case_name *name, bench_case *out, prep_result *res);

/* Any case by its id into `out` (not kept in the serve table): what a thread prepares for itself. */
prep_status prepare_into(const char *id, bench_case *out, prep_result *res);
int threads_run(int argc, char **argv);   /* threads.c: `threads CASE N MS [own|libctx|shared]` */
void list_threads(void);                 /* threads.c: its results' names, for the catalog */
/* The loop a profiler watches (profile.c) and the CPU's own counters of N operations (counters.c). */
int profile_case(bench_case *c, uint64_t iters, double seconds, int differential);
int hwcount_case(bench_case *c, uint64_t iters);
const char *sp_counters_state(void);

void json_string(const char *s);     /* prints s as a JSON string */
/* {"type":TYPE,"case":ID,"reason":REASON} on stdout; returns 1 (an exit code). */
int json_refusal(const char *type, const char *case_id, const char *reason);
/* ,"negotiated":{...}: what `n` knows (nothing when it recorded no connection); main.c. */
void json_negotiated(const sp_negotiated *n);
prep_status prep_na(prep_result *res, const char *fmt, ...);
prep_status prep_unknown(prep_result *res, const char *fmt, ...);
prep_status prep_error(prep_result *res, const char *fmt, ...);   /* appends the library's error queue */
/* The end of a prepare: when `status` is PREP_OK, `out` takes the state (its unit, bytes per operation and
 * release); otherwise the state is released. Returns `status`. */
prep_status sp_take(prep_status status, bench_case *out, void *state, void (*release)(void *), unit_kind unit,
                    size_t bytes_per_op);
void sp_append_errors(char *text, size_t size);   /* appends " (the library's first queued error)" (backend) */

int parse_size(const char *text, size_t *out);
void fill_pattern(unsigned char *buf, size_t len, unsigned seed);
int hex_equal(const unsigned char *bytes, size_t len, const char *hex);

/* ---- timing (util.c): the one clock and calibration every file uses ---- */

typedef enum { SP_WALL, SP_PROCESS_CPU, SP_THREAD_CPU } sp_clock;   /* monotonic, process CPU, thread CPU */
uint64_t sp_now_ns(sp_clock clock);
/* Wall and process CPU time of one batch of `iters`. */
int sp_timed_batch(batch_fn run, void *state, uint64_t iters, uint64_t *wall_ns, uint64_t *cpu_ns);
/* What the scheduler did to the calling thread so far: the time it waited, runnable, for a CPU another task held
 * (the kernel's run delay) and how many times it was put on a CPU. Read before and after a timed batch, outside it:
 * a sample that waited has a wall time that is not the library's (issue 50). 0 where the kernel does not say. */
typedef struct {
    uint64_t wait_ns, slices;
} sp_sched;
int sp_sched_now(sp_sched *s);
/* Iterations for one batch of about `target_ns` wall time (less what the thread waited for its CPU), scaled from
 * growing batches until one takes `probe_ns`/4 (serve and run probe the
 * whole target; long runs probe SP_SHORT_PROBE of it). */
int sp_calibrate(batch_fn run, void *state, uint64_t target_ns, uint64_t probe_ns, uint64_t *iters_out);
#define SP_SHORT_PROBE(target_ns) ((target_ns) / 10 < 50000000ull ? (target_ns) / 10 : 50000000ull)

/* Each operation's wall time, for percentiles (TLS handshakes): a uniform sample of at most SP_LATENCY_KEEP of
 * those since the last reset (reservoir sampling), so a long run costs no more memory and its end counts as much
 * as its start. One clock read per operation, next to a handshake's tens of microseconds or more. */
#define SP_LATENCY_KEEP 256
typedef struct sp_latencies {
    uint64_t ns[SP_LATENCY_KEEP];
    uint64_t seen, random;
    size_t n;
} sp_latencies;
void sp_latency_add(sp_latencies *l, uint64_t ns);
void sp_latency_reset(sp_latencies *l);

/* ---- for backends that cannot make certificates (harness pem-certs made them) ---- */

/* SSLPERF_TLS_PEM_DIR: ca.pem, and NAME.pem / NAME.key per certificate row; NULL when unset. */
const char *sp_pem_dir(void);
/* The CA file clients load (SSLPERF_CERT_DIR's ~150 certificates and the PEM CA), made once per process by the
 * first caller, on any thread (the others wait for the whole file); NULL if it cannot be. */
const char *sp_roots_file(void);

/* Two sides' time (a client and a server, a writer and a reader) when timing them apart on every operation would
 * cost more than the operation can bear: a few operations are timed side by side (a_ns, b_ns) and the batches'
 * whole time (batch_ns) is divided in their proportion. */
typedef struct {
    uint64_t a_ns, b_ns, ops, batch_ns;
} sp_sampled_split;
void sp_split_sampled(sp_sampled_split *s, uint64_t *a, uint64_t *b);   /* the division; then starts again */

/* ---- tables of named rows: every table's first member is the row's name ---- */

#define SP_ROWS(table) (table), sizeof(table) / sizeof((table)[0]), sizeof((table)[0])
int sp_find(const char *name, const void *rows, size_t n, size_t stride);   /* the row's index, or -1 */
/* The names joined by `sep`, for messages ("a, b, c"); returns buf. */
const char *sp_join(char *buf, size_t len, const char *sep, const void *rows, size_t n, size_t stride);
extern const char *const WORKLOADS[2];   /* record, speed-compat (cipher and digest cases) */

/* ---- `harness list`: the case catalog, one emitter per family file ---- */

/* How a family names its cases, for `harness list`; Python parses and makes ids from these alone.
 * `id`: the name's shape, segments of literals and {part}s ({size}: a positive integer; {part...}: the
 * rest of the name, slashes and all; [/{part}]: optional). A part is one of the family's list of that
 * name with an `s` (protocol: "protocols"), or of that name (resumption). `family`: where its results
 * belong when not the catalog key's; `algorithm`, `operation`: how the table shows them, from the
 * parts (NULL: the part of that name). */
typedef struct {
    const char *id, *family, *algorithm, *operation;
} id_template;
void json_ids(const id_template *rows, size_t n);   /* "ids":[{"id":...},...] */
#define SP_IDS(table) (table), sizeof(table) / sizeof((table)[0])

void json_names(const char *key, const void *rows, size_t n, size_t stride);   /* ,"key":["a",...] */
/* Opens an algorithm object {"name":...[,"needs":...] (a comma first unless
 * i == 0); the caller adds its fields and the closing brace. */
void json_row(size_t i, const char *name, const char *needs);
#endif
