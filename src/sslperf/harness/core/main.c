/* sslperf harness: the only program that calls the library under test.
 *
 * This file and the rest of core/ are the same for every library: the
 * commands below, the serve protocol, the timing core (util.c) and the
 * result format. A backend (one directory beside core/: openssl/, rustls/)
 * speaks one library's API: its families prepare cases, and backend.h says
 * what else it gives the core (its info, its own commands).
 *
 *   harness info                       what the library says about itself
 *   harness run [opts] CASE...         measure cases, one JSON line per result
 *   harness serve                      line protocol on stdin (used by sslperf,
 *                                      which interleaves libraries sample by sample)
 *   harness profile CASE [--seconds S | --iters N [--differential]]   one case in a loop for a profiler (profile.c)
 *   harness hwcount CASE --iters N   the CPU's own instruction and cycle counts of N operations (counters.c)
 *   harness memory CASE N              memory per connection, through the backend's SP_MEMORY (memory.c)
 *   harness https-server|https-get ... HTTPS over loopback TCP, through the backend's SP_HTTPS (https.c)
 *   harness ...                        the backend's own commands (its SP_BACKEND_COMMANDS)
 *
 * serve commands, one per line, each answered by one JSON line:
 *   info | prepare ID | calibrate ID TARGET_NS | sample ID ITERS COUNT | release ID | quit
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "harness.h"
#include "loopback.h"
#include "memory.h"

#define MAX_PREPARED 512
#define MAX_SAMPLES 1000

static bench_case prepared[MAX_PREPARED];
static int n_prepared;

/* ---- JSON output ---------------------------------------------------- */

static void json_u64_array(const uint64_t *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; i++)
        printf(i ? ",%llu" : "%llu", (unsigned long long)v[i]);
    putchar(']');
}

static void emit_status(const char *type, const char *id, const char *reason)
{
    printf("{\"type\":");
    json_string(type);
    printf(",\"case\":");
    json_string(id);
    if (reason) {
        printf(",\"reason\":");
        json_string(reason);
    }
    printf("}\n");
    fflush(stdout);
}

/* ---- the library ---------------------------------------------------- */

static void emit_info(void)
{
    printf("{\"type\":\"info\",\"backend\":");
    json_string(SP_BACKEND_NAME);
    sp_backend_info();
    printf(",\"hw_counters\":");
    json_string(sp_counters_state());
    printf("}\n");
    fflush(stdout);
}

/* ---- cases --------------------------------------------------------------- */

int sp_split_name(const char *id, case_name *name)
{
    if (strlen(id) >= sizeof(name->buf))
        return 0;
    strcpy(name->buf, id);
    name->n = 0;
    for (char *p = name->buf; name->n < MAX_PARTS;) {
        name->part[name->n++] = p;
        char *slash = strchr(p, '/');
        if (!slash)
            return 1;
        *slash = '\0';
        p = slash + 1;
    }
    return 0;
}

static bench_case *find_prepared(const char *id)
{
    for (int i = 0; i < n_prepared; i++)
        if (strcmp(prepared[i].id, id) == 0)
            return &prepared[i];
    return NULL;
}

/* Prepare `id`; prints nothing. Returns the case or NULL with `res` set. */
static bench_case *prepare(const char *id, prep_result *res)
{
    bench_case *existing = find_prepared(id);

    memset(res, 0, sizeof(*res));
    if (existing)
        return existing;
    if (n_prepared == MAX_PREPARED) {
        prep_error(res, "too many prepared cases (release some first)");
        return NULL;
    }
    bench_case *c = &prepared[n_prepared];
    if (prepare_into(id, c, res) != PREP_OK)
        return NULL;   /* families free what they made before failing */
    n_prepared++;
    return c;
}

prep_status prepare_into(const char *id, bench_case *c, prep_result *res)
{
    case_name name;
    memset(c, 0, sizeof(*c));
    if (!sp_split_name(id, &name)) {
        snprintf(res->reason, sizeof(res->reason), "malformed case name (family/algorithm/operation/...)");
        return res->status = PREP_UNKNOWN;
    }
    res->status = PREP_UNKNOWN;
    snprintf(res->reason, sizeof(res->reason), "no family is called \"%s\"", name.part[0]);
    for (size_t f = 0; f < SP_N_FAMILIES; f++) {
        if (strcmp(SP_FAMILIES[f].name, name.part[0]) == 0) {
            res->status = SP_FAMILIES[f].prepare(&name, c, res);
            break;
        }
    }
    if (res->status == PREP_OK)
        snprintf(c->id, sizeof(c->id), "%s", id);
    sp_backend_explain(res);
    return res->status;
}

static void release_case(const char *id)
{
    for (int i = 0; i < n_prepared; i++) {
        if (strcmp(prepared[i].id, id) == 0) {
            if (prepared[i].release)
                prepared[i].release(prepared[i].state);
            prepared[i] = prepared[--n_prepared];
            return;
        }
    }
}

static const char *status_type(prep_status status)
{
    return status == PREP_NA ? "na" : status == PREP_UNKNOWN ? "unknown" : "error";
}

/* ,"negotiated":{...} with what is known of it (codepoints as numbers; Python names them). */
void json_negotiated(const sp_negotiated *n)
{
    if (!n->known)
        return;
    const char *keys[] = {"version", "group", "suite", "signature", "hello_retry", "client_bytes", "server_bytes"};
    int64_t values[] = {n->version, n->group, n->suite, n->signature, n->hello_retry, n->client_bytes,
                        n->server_bytes};
    int fields = 0;
    printf(",\"negotiated\":{");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (values[i] != SP_UNKNOWN)
            printf("%s\"%s\":%lld", fields++ ? "," : "", keys[i], (long long)values[i]);
    printf("}");
}

static void emit_prepared(const bench_case *c)
{
    printf("{\"type\":\"prepared\",\"case\":");
    json_string(c->id);
    printf(",\"unit\":\"%s\",\"bytes_per_op\":%zu", c->unit == UNIT_BYTES ? "bytes" : "ops", c->bytes_per_op);
    if (c->note[0]) {
        printf(",\"note\":");
        json_string(c->note);
    }
    if (c->checked[0]) {
        printf(",\"checked\":");
        json_string(c->checked);
    }
    json_negotiated(&c->negotiated);
    printf("}\n");
    fflush(stdout);
}

/* The two sides' proportion (timed apart on a few operations, applied to the batch's wall time) applied instead to
 * the sample's CPU time: a sample the scheduler preempted would charge the wait to both sides. */
static void split_over_cpu(uint64_t cpu, uint64_t *a, uint64_t *b)
{
    uint64_t whole = *a + *b;
    *a = whole ? (uint64_t)((double)cpu * (double)*a / (double)whole) : 0;
    *b = whole ? cpu - *a : 0;
}

static int sample(bench_case *c, uint64_t iters, int count, int emit_type_result)
{
    static uint64_t wall[MAX_SAMPLES], cpu[MAX_SAMPLES], ops[MAX_SAMPLES], client[MAX_SAMPLES], server[MAX_SAMPLES];
    static uint64_t waited[MAX_SAMPLES], slices[MAX_SAMPLES];
    int scheduled = 1;      /* the kernel told what it did to every sample */
    if (count < 1 || count > MAX_SAMPLES)
        count = count < 1 ? 1 : MAX_SAMPLES;
    static uint64_t op_ns[MAX_SAMPLES * SP_LATENCY_KEEP];
    size_t kept = 0;
    sp_latencies *latencies = c->latencies ? c->latencies(c->state) : NULL;
    if (c->split)
        c->split(c->state, &client[0], &server[0]);     /* forget what calibration added */
    for (int i = 0; i < count; i++) {
        ops[i] = iters;
        if (latencies)
            sp_latency_reset(latencies);
        sp_sched before, after;
        scheduled &= sp_sched_now(&before);
        int ok = sp_timed_batch(c->run, c->state, iters, &wall[i], &cpu[i]);
        scheduled &= sp_sched_now(&after);
        waited[i] = after.wait_ns - before.wait_ns;
        slices[i] = after.slices - before.slices;
        if (c->split) {
            c->split(c->state, &client[i], &server[i]);
            split_over_cpu(cpu[i], &client[i], &server[i]);
        }
        for (size_t k = 0; latencies && k < latencies->n; k++)     /* a uniform sample of each sample's */
            op_ns[kept++] = latencies->ns[k];
        if (!ok) {
            char msg[REASON_MAX];
            prep_result res;
            prep_error(&res, "an operation failed while timing");
            snprintf(msg, sizeof(msg), "%s", res.reason);
            emit_status("error", c->id, msg);
            return 0;
        }
    }
    printf("{\"type\":\"%s\",\"case\":", emit_type_result ? "result" : "samples");
    json_string(c->id);
    printf(",\"unit\":\"%s\",\"bytes_per_op\":%zu,\"ops\":", c->unit == UNIT_BYTES ? "bytes" : "ops",
           c->bytes_per_op);
    json_u64_array(ops, count);
    printf(",\"wall_ns\":");
    json_u64_array(wall, count);
    printf(",\"cpu_ns\":");
    json_u64_array(cpu, count);
    if (scheduled) {
        printf(",\"wait_ns\":");
        json_u64_array(waited, count);
        printf(",\"slices\":");
        json_u64_array(slices, count);
    }
    if (c->split) {
        printf(",\"client_cpu_ns\":");
        json_u64_array(client, count);
        printf(",\"server_cpu_ns\":");
        json_u64_array(server, count);
    }
    if (latencies) {
        printf(",\"op_wall_ns\":");
        json_u64_array(op_ns, (int)kept);
    }
    if (emit_type_result) {
        printf(",\"library\":");
        json_string(sp_library_version());
        if (c->note[0]) {
            printf(",\"note\":");
            json_string(c->note);
        }
    }
    printf("}\n");
    fflush(stdout);
    return 1;
}

/* ---- modes ---------------------------------------------------------------- */

static int run_mode(int argc, char **argv)
{
    uint64_t target_ns = 20000000ull;
    int samples = 5, failures = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--time-ms") == 0 && i + 1 < argc) {
            target_ns = strtoull(argv[++i], NULL, 10) * 1000000ull;
        } else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            samples = atoi(argv[++i]);
        } else {
            prep_result res;
            uint64_t iters;
            bench_case *c = prepare(argv[i], &res);
            if (c == NULL) {
                emit_status(status_type(res.status), argv[i], res.reason);
                failures += res.status != PREP_NA;
                continue;
            }
            if (!sp_calibrate(c->run, c->state, target_ns, target_ns, &iters)) {
                emit_status("error", c->id, "an operation failed during calibration");
                failures++;
            } else if (!sample(c, iters, samples, 1)) {
                failures++;
            }
            release_case(argv[i]);
        }
    }
    return failures ? 1 : 0;
}

static int profile_mode(int argc, char **argv)
{
    double seconds = 5;
    unsigned long long iters = 0;
    int differential = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--differential") == 0)
            differential = 1;
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = strtoull(argv[++i], NULL, 10);
    }
    prep_result res;
    if (argc < 1) {
        emit_status("error", "", "no case named");
        return 2;
    }
    bench_case *c = prepare(argv[0], &res);     /* setup: before and outside the profiled loop */
    if (c == NULL) {
        emit_status(status_type(res.status), argv[0], res.reason);
        return 1;
    }
    int ok = profile_case(c, iters, seconds > 0 ? seconds : 5, differential);
    release_case(c->id);
    return ok ? 0 : 1;
}

static int hwcount_mode(int argc, char **argv)
{
    unsigned long long iters = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--iters") == 0)
            iters = strtoull(argv[i + 1], NULL, 10);
    if (iters == 0) {
        emit_status("error", argv[0], "hwcount needs --iters N (N > 0)");
        return 2;
    }
    prep_result res;
    bench_case *c = prepare(argv[0], &res);     /* setup: before and outside the counted loop */
    if (c == NULL) {
        emit_status(status_type(res.status), argv[0], res.reason);
        return 1;
    }
    int ok = hwcount_case(c, iters);
    release_case(c->id);
    return ok ? 0 : 1;
}

static int serve_mode(int argc, char **argv)
{
    (void)argc, (void)argv;
    char line[512];
    while (fgets(line, sizeof(line), stdin)) {
        char cmd[32] = "", id[CASE_ID_MAX] = "";
        unsigned long long a = 0, b = 0;
        int n;
        line[strcspn(line, "\r\n")] = '\0';
        n = sscanf(line, "%31s %159s %llu %llu", cmd, id, &a, &b);
        if (n < 1)
            continue;
        if (strcmp(cmd, "quit") == 0)
            break;
        if (strcmp(cmd, "info") == 0) {
            emit_info();
        } else if (strcmp(cmd, "clock") == 0) {     /* a probe's driver marks when each round began */
            printf("{\"type\":\"clock\",\"monotonic_ns\":%llu}\n", (unsigned long long)sp_now_ns(SP_WALL));
            fflush(stdout);
        } else if (strcmp(cmd, "prepare") == 0 && n >= 2) {
            prep_result res;
            bench_case *c = prepare(id, &res);
            if (c)
                emit_prepared(c);
            else
                emit_status(status_type(res.status), id, res.reason);
        } else if ((strcmp(cmd, "calibrate") == 0 && n >= 3) || (strcmp(cmd, "sample") == 0 && n >= 4)) {
            bench_case *c = find_prepared(id);
            uint64_t iters;
            if (!c) {
                emit_status("error", id, "not prepared");
            } else if (cmd[0] == 'c') {
                if (sp_calibrate(c->run, c->state, a, a, &iters))
                    printf("{\"type\":\"calibrated\",\"case\":\"%s\",\"iters\":%llu}\n", c->id,
                           (unsigned long long)iters), fflush(stdout);
                else
                    emit_status("error", id, "an operation failed during calibration");
            } else {
                sample(c, a, (int)b, 0);
            }
        } else if (strcmp(cmd, "release") == 0 && n >= 2) {
            release_case(id);
            emit_status("released", id, NULL);
        } else {
            emit_status("error", id, "unknown command");
        }
    }
    while (n_prepared > 0)
        release_case(prepared[0].id);
    return 0;
}

static int info_mode(int argc, char **argv)
{
    (void)argc, (void)argv;
    emit_info();
    return 0;
}

/* The core's commands; the backend's own follow them in the usage. */
static const sp_command COMMANDS[] = {
    {"info", 0, SP_ANY_ARGS, info_mode, "info"},
    {"run", 0, SP_ANY_ARGS, run_mode, "run [--time-ms T] [--samples N] CASE..."},
    {"serve", 0, SP_ANY_ARGS, serve_mode, "serve"},
    {"profile", 0, SP_ANY_ARGS, profile_mode, "profile CASE [--seconds S | --iters N [--differential]]"},
    {"hwcount", 3, 3, hwcount_mode, "hwcount CASE --iters N   user-space instructions and cycles (counters.c)"},
    {"https-server", 0, SP_ANY_ARGS, sp_https_server_mode,
     "https-server DIR PROTO GROUP CERT MAX_CONNECTIONS [WORKERS]   (https.c)"},
    {"https-get", 0, SP_ANY_ARGS, sp_https_get_mode,
     "https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT [THREADS]"},
    {"memory", 2, 2, sp_memory_mode, "memory tls/handshake/PROTO/GROUP/CERT/shared CONNECTIONS   (memory.c)"},
    {"udp-relay", 6, 6, udp_relay, "udp-relay SERVER_PORT DELAY_US JITTER_US LOSS_PPM SEED IDLE_MS   (relay.c)"},
};

static const sp_command *find_command(const char *name)
{
    int c = sp_find(name, SP_ROWS(COMMANDS));
    if (c >= 0)
        return &COMMANDS[c];
    c = sp_find(name, SP_BACKEND_COMMANDS, SP_N_BACKEND_COMMANDS, sizeof(SP_BACKEND_COMMANDS[0]));
    return c >= 0 ? &SP_BACKEND_COMMANDS[c] : NULL;
}

static void usage(const char *program, const sp_command *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "  %s %s\n", program, rows[i].usage);
}

int main(int argc, char **argv)
{
    sp_backend_init(argc >= 2 ? argv[1] : "");
    const sp_command *c = argc >= 2 ? find_command(argv[1]) : NULL;
    int args = argc - 2;
    if (c && args >= c->min_args && (c->max_args == SP_ANY_ARGS || args <= c->max_args))
        return c->fn(args, argv + 2);
    fprintf(stderr, "usage:\n");
    usage(argv[0], COMMANDS, sizeof(COMMANDS) / sizeof(COMMANDS[0]));
    usage(argv[0], SP_BACKEND_COMMANDS, SP_N_BACKEND_COMMANDS);
    return 2;
}
