/* sslperf harness: the only program that calls the crypto library.
 *
 *   harness info                       what the library says about itself
 *   harness list                       the case catalog (every family's tables), one JSON line
 *   harness run [opts] CASE...         measure cases, one JSON line per result
 *   harness serve                      line protocol on stdin (used by sslperf,
 *                                      which interleaves libraries sample by sample)
 *   harness profile CASE [--seconds S | --iters N [--differential]]   one case in a loop for a profiler (profile.c)
 *   harness hwcount CASE --iters N   the CPU's own instruction and cycle counts of N operations (counters.c)
 *   harness mkcerts DIR COUNT          test CA store, key and certificate (certs.c)
 *   harness https-server | https-get   HTTPS over loopback (loopback.c)
 *   harness threads CASE N MS [own|libctx|shared]   any case in N threads (threads.c)
 *   harness check-config KEY=VALUE... does this library accept these TLS settings (config_check.c)
 *   harness memory CASE N              bytes per TLS connection, N in lockstep (memory.c)
 *   harness transfer-server | transfer-client   bulk transfer over loopback TCP, kTLS on/off (transfer_tcp.c)
 *
 * serve commands, one per line, each answered by one JSON line:
 *   info | prepare ID | calibrate ID TARGET_NS | sample ID ITERS COUNT | release ID | quit
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"

#define MAX_PREPARED 512
#define MAX_SAMPLES 1000

static const struct {
    const char *name;
    prepare_fn prepare;
} FAMILIES[] = {
    {"cipher", prepare_cipher}, {"digest", prepare_digest}, {"mac", prepare_mac},
    {"sig", prepare_pkey},      {"kex", prepare_pkey},      {"kem", prepare_pkey},
    {"keygen", prepare_pkey},   {"api", prepare_api},       {"tls", prepare_tls},
    {"afalg", prepare_afalg},
};

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

#if defined(__x86_64__) || defined(__i386__)
/* The capability vector the library decided on (after OPENSSL_ia32cap).
 * Weak: a shared libcrypto does not export it, and then it is unknown. */
extern unsigned int OPENSSL_ia32cap_P[] __attribute__((weak));
#endif

static void emit_info(void)
{
    printf("{\"type\":\"info\",\"flavor\":");
    json_string(sp_flavor());
    printf(",\"version_string\":");
    json_string(OpenSSL_version(OPENSSL_VERSION));
    printf(",\"version_number\":%lu", (unsigned long)OPENSSL_VERSION_NUMBER);
    printf(",\"speed_aead_rekey\":%s", SP_SPEED_AEAD_REKEY ? "true" : "false");
    printf(",\"ia32cap\":");
#if defined(__x86_64__) || defined(__i386__)
    unsigned int *volatile cap = OPENSSL_ia32cap_P;   /* volatile: the weak symbol may be absent */
    if (cap != NULL) {
        char caps[80];
        snprintf(caps, sizeof(caps), "0x%08x%08x:0x%08x%08x", cap[1], cap[0], cap[3], cap[2]);
        json_string(caps);
    } else {
        printf("null");
    }
#else
    printf("null");
#endif
    sp_provider_info();
    printf(",\"deterministic_rand\":");
    json_string(sp_deterministic_state());
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
    for (size_t f = 0; f < sizeof(FAMILIES) / sizeof(FAMILIES[0]); f++) {
        if (strcmp(FAMILIES[f].name, name.part[0]) == 0) {
            res->status = FAMILIES[f].prepare(&name, c, res);
            break;
        }
    }
    if (res->status == PREP_OK)
        snprintf(c->id, sizeof(c->id), "%s", id);
    sp_provider_explain(res);
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
    printf("}\n");
    fflush(stdout);
}

static int sample(bench_case *c, uint64_t iters, int count, int emit_type_result)
{
    static uint64_t wall[MAX_SAMPLES], cpu[MAX_SAMPLES], ops[MAX_SAMPLES], client[MAX_SAMPLES], server[MAX_SAMPLES];
    if (count < 1 || count > MAX_SAMPLES)
        count = count < 1 ? 1 : MAX_SAMPLES;
    if (c->split)
        c->split(c->state, &client[0], &server[0]);     /* forget what calibration added */
    for (int i = 0; i < count; i++) {
        ops[i] = iters;
        int ok = sp_timed_batch(c->run, c->state, iters, &wall[i], &cpu[i]);
        if (c->split)
            c->split(c->state, &client[i], &server[i]);
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
    if (c->split) {
        printf(",\"client_cpu_ns\":");
        json_u64_array(client, count);
        printf(",\"server_cpu_ns\":");
        json_u64_array(server, count);
    }
    if (emit_type_result) {
        printf(",\"library\":");
        json_string(OpenSSL_version(OPENSSL_VERSION));
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

/* What imports of `openssl speed` and `bssl speed` hold beyond the families above (sslperf's importers
 * name their cases after these templates; the harness measures none of them). */
void list_imported(void)
{
    static const id_template PKE[] = {{"pke/{algorithm}/{operation}[/{workload}]", NULL, NULL, NULL}};
    static const id_template OTHER[] = {{"other/{algorithm}[/{size}][/{workload}]", NULL, NULL, ""}};
    printf("\"pke\":{");
    json_ids(SP_IDS(PKE));
    printf("},\"other\":{");
    json_ids(SP_IDS(OTHER));
    putchar('}');
}

/* The case catalog from the tables the families prepare from: one line. */
static int list_mode(int argc, char **argv)
{
    static void (*const lists[])(void) = {list_cipher, list_digest, list_mac, list_pkey, list_api, list_tls,
                                          list_threads, list_afalg, list_imported};
    (void)argc, (void)argv;
    printf("{\"type\":\"catalog\"");
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        putchar(',');
        lists[i]();
    }
    printf("}\n");
    fflush(stdout);
    return 0;
}

static int mkcerts_mode(int argc, char **argv)
{
    (void)argc;
    int ok = make_certs(argv[0], atoi(argv[1]));
    if (!ok)
        ERR_print_errors_fp(stderr);
    printf("{\"type\":\"%s\",\"dir\":", ok ? "certs" : "error");
    json_string(argv[0]);
    printf("}\n");
    return ok ? 0 : 1;
}

#define ANY -1
static const struct {
    const char *name;
    int min_args, max_args;     /* after the command's name; ANY: no limit */
    int (*fn)(int argc, char **argv);
    const char *usage;
} COMMANDS[] = {
    {"info", 0, ANY, info_mode, "info"},
    {"list", 0, 0, list_mode, "list"},
    {"run", 0, ANY, run_mode, "run [--time-ms T] [--samples N] CASE..."},
    {"serve", 0, ANY, serve_mode, "serve"},
    {"profile", 0, ANY, profile_mode, "profile CASE [--seconds S | --iters N [--differential]]"},
    {"hwcount", 3, 3, hwcount_mode, "hwcount CASE --iters N   user-space instructions and cycles (counters.c)"},
    {"mkcerts", 2, 2, mkcerts_mode, "mkcerts DIR COUNT"},
    {"https-server", 0, ANY, https_server, "https-server DIR PROTO GROUP CERT MAX_CONNECTIONS"},
    {"https-get", 0, ANY, https_get, "https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT"},
    {"threads", 3, 4, threads_run, "threads CASE THREADS MS [own|libctx|shared]"},
    {"check-config", 0, ANY, check_config, "check-config KEY=VALUE..."},
    {"transfer-server", 5, 5, transfer_server, "transfer-server DIR PROTO SUITE SIZE on|off"},
    {"transfer-client", 7, 7, transfer_client, "transfer-client PORT CA_FILE PROTO SUITE SIZE MS on|off"},
    {"memory", 2, 2, memory_mode, "memory tls/handshake/PROTO/GROUP/CERT/shared CONNECTIONS"},
    {"fetch", 2, 2, fetch_mode, "fetch digest|cipher|mac|signature|keyexch NAME"},
};

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "memory") == 0)
        memory_hooks_install();              /* before the library allocates anything */
#if SP_BSSL
    CRYPTO_library_init();
#else
    OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
#endif
    sp_provider_setup();
    sp_deterministic_setup();
    int c = argc >= 2 ? sp_find(argv[1], SP_ROWS(COMMANDS)) : -1, args = argc - 2;
    if (c >= 0 && args >= COMMANDS[c].min_args && (COMMANDS[c].max_args == ANY || args <= COMMANDS[c].max_args))
        return COMMANDS[c].fn(args, argv + 2);
    fprintf(stderr, "usage:\n");
    for (size_t i = 0; i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++)
        fprintf(stderr, "  %s %s\n", argv[0], COMMANDS[i].usage);
    return 2;
}
